// `main.ts admin ...`: account administration against the database directly. With the embedded
// database, stop the server first (the data folder is locked by the running server).
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { startSystem } from '../system.ts';
import type { AllowanceCode } from '../inspection/allowance/allowance.service.ts';
import { emailAddressProblem } from '../infra/mail/mailer.ts';

const HELP = `admin commands:
  create-org --name NAME                                   -> organization uuid
  create-user --username U --password P [--email E] [--org ORG_UUID]
  create-api-key --name NAME [--org ORG_UUID]              -> the key (shown once); with --org, the organization's
                                                              applications' key: its members log in with it however
                                                              others' failed logins throttle their accounts
  list-api-keys                                            -> id, name, organization, created, revoked of every key
  revoke-api-key --id ID                                   (tokens obtained with it stop working)
  create-cloud-client --org ORG_UUID [--name NAME] [--email E]
                                                           -> client_id and client_secret (shown once); --email: where
                                                              its processing and webhook e-mails go (none without)
  set-cloud-client-email --client-id ID --email E|none     the client's notification address (none: no e-mails)
  delete-cloud-client --client-id ID                       (disables the credentials)
  add-member --org ORG_UUID --username U [--role member|admin]
                                                           adds a member, or sets a member's role (admin: removes
                                                              members over the API)
  remove-member --org ORG_UUID --username U                removes a member and, at once, their share tokens,
                                                              webhooks and storage credentials in the organization
  grant --type projects|tower_inventory --amount N (--org ORG_UUID | --username U)
  set-retention --org ORG_UUID --days N|default            days the organization's inspections keep their photos,
                                                              outputs and inputs (0: for ever; default: RETENTION_DAYS)`;

/** A notification address the mailer can use, or an error naming the problem. */
function checkedEmail(address: string): string {
  const problem = emailAddressProblem(address);
  if (problem) throw new Error(`--email: ${problem}`);
  return address;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function runAdmin(config: Config, argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help') {
    console.log(HELP);
    return command ? 0 : 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      username: { type: 'string' },
      password: { type: 'string' },
      email: { type: 'string' },
      org: { type: 'string' },
      type: { type: 'string' },
      amount: { type: 'string' },
      'client-id': { type: 'string' },
      id: { type: 'string' },
      days: { type: 'string' },
      role: { type: 'string' },
    },
  });
  const need = (key: keyof typeof values): string => {
    const value = values[key];
    if (typeof value !== 'string' || value === '') throw new Error(`--${key} is required.\n${HELP}`);
    return value;
  };
  const system = await startSystem({ ...config, bootstrapDemo: false, runWorkers: false }, 'admin');
  try {
    const accounts = system.inspection.accounts;
    const org = async () => {
      // Not a UUID: no organization (the database would refuse the comparison with its own error).
      const uuid = need('org');
      const found = UUID.test(uuid) ? await accounts.findOrganization(uuid) : undefined;
      if (!found) throw new Error(`No organization ${uuid}.`);
      return found;
    };
    switch (command) {
      case 'create-org': {
        const created = await accounts.createOrganization(need('name'));
        await system.cloud.ensureOrganization(need('name'), created.uuid);
        console.log(JSON.stringify({ organization_uuid: created.uuid }));
        break;
      }
      case 'create-user': {
        // The organization first, then the user and the membership together: a bad --org creates nothing.
        const organizationId = values.org ? (await org()).id : undefined;
        const user = await accounts.createUser(need('username'), need('password'), values.email ?? '', organizationId);
        console.log(JSON.stringify({ user_id: user.id }));
        break;
      }
      case 'create-api-key': {
        const key = await accounts.createApiKey(need('name'), values.org ? (await org()).id : null);
        console.log(JSON.stringify({ api_key_id: key.id, api_key: key.key }));
        break;
      }
      case 'list-api-keys':
        for (const key of await accounts.listApiKeys()) console.log(JSON.stringify(key));
        break;
      case 'revoke-api-key': {
        const id = Number(need('id'));
        if (!Number.isInteger(id) || id <= 0) throw new Error('--id must be a positive integer');
        await accounts.revokeApiKey(id);
        console.log(JSON.stringify({ revoked: id }));
        break;
      }
      case 'create-cloud-client': {
        const o = await org();
        const cloudOrg = await system.cloud.ensureOrganization(o.name, o.uuid);
        const client = await system.cloud.oauth.createClient(cloudOrg.id, values.name ?? 'client', { email: values.email === undefined ? null : checkedEmail(values.email) });
        console.log(JSON.stringify({ client_id: client.clientId, client_secret: client.clientSecret }));
        break;
      }
      case 'set-cloud-client-email': {
        const raw = need('email');
        const email = raw === 'none' ? null : checkedEmail(raw);
        if (!(await system.cloud.oauth.setClientEmail(need('client-id'), email))) throw new Error(`No cloud client ${values['client-id']}.`);
        console.log(JSON.stringify({ client_id: values['client-id'], email }));
        break;
      }
      case 'delete-cloud-client':
        console.log(JSON.stringify({ deleted: await system.cloud.oauth.deleteClient(need('client-id')) }));
        break;
      case 'add-member': {
        const role = values.role ?? 'member';
        if (role !== 'member' && role !== 'admin') throw new Error('--role must be member or admin');
        const o = await org();
        const user = await accounts.findUser(need('username'));
        if (!user) throw new Error(`No user ${values.username}.`);
        await system.inspection.memberships.setMember(user.id, o.id, role);
        console.log(JSON.stringify({ organization_uuid: o.uuid, user_id: user.id, role }));
        break;
      }
      case 'remove-member': {
        const o = await org();
        const user = await accounts.findUser(need('username'));
        if (!user) throw new Error(`No user ${values.username}.`);
        const removed = await system.inspection.memberships.remove(o, user.id);
        if (!removed) throw new Error(`${values.username} is not a member of ${o.uuid}.`);
        console.log(JSON.stringify(removed));
        break;
      }
      case 'grant': {
        const code = need('type') as AllowanceCode;
        if (code !== 'projects' && code !== 'tower_inventory') throw new Error('--type must be projects or tower_inventory');
        const amount = Number(need('amount'));
        if (!Number.isInteger(amount) || amount <= 0) throw new Error('--amount must be a positive integer');
        let account;
        if (values.org) account = { organizationId: (await org()).id };
        else {
          const user = await accounts.findUser(need('username'));
          if (!user) throw new Error(`No user ${values.username}.`);
          account = { userId: user.id };
        }
        await system.inspection.allowance.grant(account, code, amount, 'granted by admin');
        console.log(JSON.stringify({ granted: amount, type: code }));
        break;
      }
      case 'set-retention': {
        const raw = need('days');
        const days = raw === 'default' ? null : Number(raw);
        if (days !== null && (!/^\d+$/.test(raw) || days > 100 * 365)) throw new Error('--days must be an integer from 0 to 36500, or default');
        const o = await org();
        await accounts.setRetentionDays(o.id, days);
        console.log(JSON.stringify({ organization_uuid: o.uuid, retention_days: days }));
        break;
      }
      default:
        console.error(`Unknown admin command "${command}".\n${HELP}`);
        return 2;
    }
    return 0;
  } finally {
    await system.stop();
  }
}
