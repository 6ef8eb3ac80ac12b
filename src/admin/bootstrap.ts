// First-start setup of the embedded installation:
// - the inspection service's own client credentials for the cloud service (it acts through the
//   cloud's public API like any client), kept in the database (server-secrets.ts);
// - a demo organization, user, API key, allowance and cloud client, written once to
//   DATA_DIR/bootstrap-credentials.json (mode 0600). Only the file's path is logged.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { CloudModule } from '../cloud/cloud.module.ts';
import type { InspectionModule } from '../inspection/inspection.module.ts';
import type { AccountAdmin } from '../inspection/auth/account-admin.ts';
import type { ServerSecretRepository } from '../infra/secrets/server-secrets.ts';

/**
 * The inspection service's own cloud organization (where a user's records without an organization
 * go) has a random uuid, as every organization: it is part of its projects' storage prefixes
 * (`uploads/org-<uuid>/project-<n>/`) and of their per-prefix role names, which a fixed uuid made
 * guessable (issue 40 §7). Nothing looks it up by uuid: the inspection service reaches it as its
 * client's own organization (a token without organization_uuid). Installations made with the
 * former fixed uuid (00000000-0000-4000-8000-000000000001) get a random one from cloud migration
 * 0013.
 */
export async function ensureInspectionCloudClient(secrets: ServerSecretRepository, cloud: CloudModule): Promise<{ clientId: string; clientSecret: string }> {
  // Two processes starting together may both create a client: the first one stored is used by all.
  const stored = await secrets.readOrCreate('inspection-cloud-client.json', async () => {
    const organization = await cloud.ensureOrganization('Inspection service');
    // A service client: it acts for each inspection's organization (issue 30, docs/cloud-service.md).
    return JSON.stringify(await cloud.oauth.createClient(organization.id, 'inspection-service', { actsForOrganizations: true }));
  });
  return JSON.parse(stored);
}

/**
 * The web console's API key. The console is an application like any other (spec: the API key
 * identifies the application), but it runs in the browser, where nothing stays secret: the key is
 * handed to the page by GET /v1/console/settings/ and only names the console; the password is what
 * authenticates (docs/web-console.md). It is created on the first start, kept in the database (server-secrets.ts),
 * and replaced when the database no longer knows it (revoked, or a new database).
 */
export async function ensureConsoleApiKey(secrets: ServerSecretRepository, accounts: AccountAdmin): Promise<string> {
  const name = 'console-api-key.json';
  const stored = await secrets.read(name);
  if (stored) {
    const { api_key } = JSON.parse(stored) as { api_key: string };
    if (await accounts.isActiveApiKey(api_key)) return api_key;
  }
  const { key } = await accounts.createApiKey('web console');
  await secrets.write(name, JSON.stringify({ api_key: key }));
  return key;
}

export interface DemoCredentials {
  organization_uuid: string;
  username: string;
  password: string;
  api_key: string;
  cloud_client_id: string;
  cloud_client_secret: string;
}

export function bootstrapFile(dataDir: string): string {
  return path.join(dataDir, 'bootstrap-credentials.json');
}

export async function bootstrapDemo(dataDir: string, deps: { cloud: CloudModule; inspection: InspectionModule; logger: Logger }): Promise<void> {
  const file = bootstrapFile(dataDir);
  if (fs.existsSync(file) || (await deps.inspection.accounts.userCount()) > 0) return;
  const accounts = deps.inspection.accounts;
  const organization = await accounts.createOrganization('Demo organization');
  const password = crypto.randomBytes(18).toString('base64url');
  const user = await accounts.createUser('demo', password, 'demo@localhost');
  // The demo user administers its organization: it can remove members (DELETE …/members/{user_id}/).
  await deps.inspection.memberships.setMember(user.id, organization.id, 'admin');
  const apiKey = await accounts.createApiKey('demo application', organization.id);
  await deps.inspection.allowance.grant({ organizationId: organization.id }, 'projects', 100, 'demo bootstrap');
  await deps.inspection.allowance.grant({ organizationId: organization.id }, 'tower_inventory', 10, 'demo bootstrap');
  await deps.inspection.allowance.grant({ userId: user.id }, 'projects', 10, 'demo bootstrap');
  const cloudOrg = await deps.cloud.ensureOrganization('Demo organization', organization.uuid);
  const cloudClient = await deps.cloud.oauth.createClient(cloudOrg.id, 'demo');
  const credentials: DemoCredentials = {
    organization_uuid: organization.uuid,
    username: 'demo',
    password,
    api_key: apiKey.key,
    cloud_client_id: cloudClient.clientId,
    cloud_client_secret: cloudClient.clientSecret,
  };
  writePrivateJson(file, credentials);
  deps.logger.info({ file }, 'first start: demo organization, user, API key and allowance created; credentials are in this file');
}

export function writePrivateJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(temp, file);
}
