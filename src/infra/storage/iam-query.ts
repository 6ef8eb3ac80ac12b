// The few IAM calls the S3 store needs (GetRole, CreateRole, PutRolePolicy, DeleteRolePolicy,
// DeleteRole), as IAM's query API: a form POST signed with SigV4 for the service "iam". Written
// here rather than adding @aws-sdk/client-iam for five calls whose answers are a handful of flat
// elements; it also reads the error code of Ceph RGW, whose IAM answers errors without AWS's
// <ErrorResponse> wrapper (the SDKs then report "Unknown").
//
// Policy documents go as compact JSON (no spaces): RGW 16 does not decode "+" in form bodies, so
// a space would reach its policy parser as a "+" (shared/tools/ceph-rgw/README.md).
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256, type SignableRequest } from './sigv4-common.ts';

export interface IamSettings {
  /** IAM's URL: https://iam.amazonaws.com on AWS; the store's own URL on Ceph RGW. */
  endpoint: string;
  /** The region requests are signed for (AWS's global IAM: us-east-1). */
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface IamRole {
  name: string;
  arn: string;
  /** Longest session AssumeRole grants for this role, seconds (AWS and RGW default: 3600). */
  maxSessionDuration: number | undefined;
}

/** An IAM answer other than 2xx: its code (NoSuchEntity, EntityAlreadyExists, AccessDenied, ...) and HTTP status. */
export class IamError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'IamError';
  }
}

const VERSION = '2010-05-08';
/** IAM answers are small; more than this is not an IAM answer. */
const MAX_ANSWER_BYTES = 256 * 1024;

export class IamQueryClient {
  private readonly signer: SignatureV4;

  constructor(private readonly settings: IamSettings) {
    this.signer = new SignatureV4({
      service: 'iam',
      region: settings.region,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      sha256: Sha256,
    });
  }

  /** The role, or undefined when there is none of that name. */
  async getRole(name: string): Promise<IamRole | undefined> {
    try {
      return roleOf(await this.call('GetRole', { RoleName: name }));
    } catch (err) {
      if (err instanceof IamError && err.code === 'NoSuchEntity') return undefined;
      throw err;
    }
  }

  async createRole(input: { name: string; path: string; trustPolicy: object; maxSessionDuration: number; description?: string }): Promise<IamRole> {
    const xml = await this.call('CreateRole', {
      RoleName: input.name,
      Path: input.path,
      AssumeRolePolicyDocument: JSON.stringify(input.trustPolicy),
      MaxSessionDuration: String(input.maxSessionDuration),
      ...(input.description ? { Description: input.description } : {}),
    });
    return roleOf(xml);
  }

  async putRolePolicy(roleName: string, policyName: string, policy: object): Promise<void> {
    await this.call('PutRolePolicy', { RoleName: roleName, PolicyName: policyName, PolicyDocument: JSON.stringify(policy) });
  }

  /** Deletes the role's inline policy; false when there was none. */
  async deleteRolePolicy(roleName: string, policyName: string): Promise<boolean> {
    return this.ignoringMissing(() => this.call('DeleteRolePolicy', { RoleName: roleName, PolicyName: policyName }));
  }

  /** Deletes the role (its inline policies must be gone); false when there was none. */
  async deleteRole(roleName: string): Promise<boolean> {
    return this.ignoringMissing(() => this.call('DeleteRole', { RoleName: roleName }));
  }

  private async ignoringMissing(call: () => Promise<string>): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (err) {
      if (err instanceof IamError && err.code === 'NoSuchEntity') return false;
      throw err;
    }
  }

  private async call(action: string, params: Record<string, string>): Promise<string> {
    const url = new URL(this.settings.endpoint);
    // encodeURIComponent, not URLSearchParams: a space becomes %20, never "+" (RGW, above).
    const body = Object.entries({ Action: action, Version: VERSION, ...params })
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      .join('&');
    const request: SignableRequest = {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname || '/',
      query: {},
      headers: { host: url.host, 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body,
    };
    const signed = await this.signer.sign(request);
    const headers = Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name.toLowerCase() !== 'host')); // fetch sends the URL's
    const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
    const text = (await response.text()).slice(0, MAX_ANSWER_BYTES);
    if (response.ok) return text;
    // <ErrorResponse><Error><Code> on AWS, a bare <Error><Code> on RGW: the first <Code> either way.
    const code = leaf(text, 'Code') ?? `HTTP${response.status}`;
    const message = leaf(text, 'Message');
    throw new IamError(code, response.status, `IAM ${action} answered ${response.status} ${code}${message ? `: ${message}` : ''}`);
  }
}

function roleOf(xml: string): IamRole {
  const name = leaf(xml, 'RoleName');
  const arn = leaf(xml, 'Arn');
  if (!name || !arn) throw new IamError('MalformedAnswer', 200, 'IAM answered without a role name and ARN');
  const max = Number(leaf(xml, 'MaxSessionDuration'));
  return { name, arn, maxSessionDuration: Number.isInteger(max) && max > 0 ? max : undefined };
}

/** The text of the first <name> element (IAM's answers used here are flat: a role, or an error). */
export function leaf(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  return m ? unescapeXml(m[1]) : undefined;
}

function unescapeXml(text: string): string {
  return text.replace(/&(lt|gt|quot|apos|amp);/g, (_, entity: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[entity]!);
}
