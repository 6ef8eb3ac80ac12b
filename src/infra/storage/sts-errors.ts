// STS failures in words. The services' clients used to get "The cloud processing service answered
// 500" while the log said `STSServiceException: UnknownError`: Ceph RGW answers STS errors as a
// bare <Error><Code>… document, without the <ErrorResponse> wrapper of AWS's query protocol, so
// the SDK cannot find the code. `readBareErrorCodes` wraps such bodies before the SDK parses them
// (the code then names the error: InvalidArgument, NoSuchEntity, AccessDenied, ...), and
// `describeStsFailure` says what the code means for whoever runs the service.
import { Readable } from 'node:stream';
import type { STSClient } from '@aws-sdk/client-sts';
import { IamError } from './iam-query.ts';

/** Error documents are small; the rest of a longer body is not read. */
const MAX_ERROR_BODY = 64 * 1024;

/** Makes the SDK read RGW's bare error documents (above). */
export function readBareErrorCodes(client: STSClient): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      const response = out.response as { statusCode?: number; headers?: Record<string, string>; body?: unknown };
      if ((response.statusCode ?? 200) >= 300 && response.body instanceof Readable) {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of response.body) {
          const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
          if (size < MAX_ERROR_BODY) chunks.push(buffer);
          size += buffer.length;
        }
        let text = Buffer.concat(chunks).toString('utf8');
        if (/<Error>/.test(text) && !/<ErrorResponse/.test(text)) text = `<ErrorResponse>${text.replace(/^<\?xml[^>]*\?>/, '')}</ErrorResponse>`;
        const body = Buffer.from(text, 'utf8');
        response.body = Readable.from([body]);
        if (response.headers) response.headers['content-length'] = String(body.length);
      }
      return out;
    },
    // Low priority in the deserialize step: inside the SDK's deserializer, so this sees the raw body first.
    { step: 'deserialize', priority: 'low', name: 'readBareErrorCodes' },
  );
}

export interface StsFailure {
  /** The store's error code (AccessDenied, NoSuchEntity, ...) or, without an answer, the network error's. */
  code: string;
  /** HTTP status of the answer; undefined when none came. */
  status: number | undefined;
  /** What went wrong and what to do, for the log and the API's 503. */
  words: string;
}

export interface StsCallContext {
  /** The role asked for; undefined: a placeholder ARN was sent (S3_ROLE_ARN unset). */
  roleArn: string | undefined;
  durationSeconds: number;
  endpoint: string | undefined;
  /** Per-prefix mode: S3_USER_ARN, the only principal its roles trust. */
  trustedPrincipalArn?: string;
}

/** The code and status of an SDK or IAM error, whichever layer threw it. */
export function errorCode(err: unknown): { code: string; status: number | undefined; message: string } {
  if (err instanceof IamError) return { code: err.code, status: err.status, message: err.message };
  const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number }; cause?: { code?: string } };
  const status = e?.$metadata?.httpStatusCode;
  // Network failures: fetch/undici keep the system code in `cause`; the SDK's handler in `code`.
  const code = status === undefined ? (e?.cause?.code ?? e?.code ?? e?.name ?? 'Error') : (e?.name ?? 'Unknown');
  return { code, status, message: e?.message ?? String(err) };
}

/** Whether STS refused the DurationSeconds asked for (longer than the role allows). */
export function isDurationRefusal(err: unknown): boolean {
  const { code, message } = errorCode(err);
  // AWS: ValidationError "The requested DurationSeconds exceeds the MaxSessionDuration set for this role."
  // RGW 16: InvalidArgument with an empty message (the only argument it checks against the role is the duration).
  return (code === 'ValidationError' && /DurationSeconds|MaxSessionDuration/i.test(message)) || code === 'InvalidArgument' || code === 'InvalidParameterValue';
}

export function describeStsFailure(err: unknown, context: StsCallContext): StsFailure {
  const { code, status, message } = errorCode(err);
  const where = context.endpoint ?? "the region's AWS STS";
  const role = context.roleArn ?? 'a placeholder role ARN (S3_ROLE_ARN is unset; only MinIO and the `storage` command ignore the role)';
  const answered = status === undefined ? `no answer: ${message}` : `${code}, HTTP ${status}${message && message !== 'UnknownError' && message !== code ? `: ${message}` : ''}`;
  let words: string;
  if (err instanceof IamError) words = `the store's IAM refused a per-prefix role (${err.message}): S3_ROLE_MODE=per-prefix needs the services' user to create and delete roles under /open-inspection/ (Ceph RGW: caps roles=*)`;
  else if (status === undefined) words = `the store's STS at ${where} could not be reached`;
  else if (code === 'NoSuchEntity' || (code === 'NotFound' && status === 404)) {
    words = context.roleArn
      ? `the store has no role ${context.roleArn}: set S3_ROLE_ARN to the role the README's recipe creates`
      : "S3_ROLE_ARN is unset and the store has no role of the placeholder ARN then sent: set S3_ROLE_ARN to the role the README's recipe creates (only MinIO and the `storage` command ignore the role)";
  }
  else if (isDurationRefusal(err)) words = `the store refused a lifetime of ${context.durationSeconds} s for role ${role}: the role's maximum session duration is shorter (set STORAGE_CREDENTIALS_TTL at most to it, or raise the role's MaxSessionDuration)`;
  else if ((code === 'AccessDenied' || code === 'AccessDeniedException') && context.trustedPrincipalArn) {
    // The per-prefix roles are ours and trust S3_USER_ARN only: a refusal means it is not S3_ACCESS_KEY_ID's user.
    words = `the store refused to let S3_ACCESS_KEY_ID assume the per-prefix role ${role}, which trusts S3_USER_ARN (${context.trustedPrincipalArn}) only: set S3_USER_ARN to the ARN of S3_ACCESS_KEY_ID's user (Ceph RGW: arn:aws:iam:::user/<uid>; AWS: arn:aws:iam::<account>:user/<name>)`;
  }
  else if (code === 'AccessDenied' || code === 'AccessDeniedException') words = `the store refused to let S3_ACCESS_KEY_ID assume role ${role}: the role's trust policy must allow the services' user`;
  else if (code === 'MalformedPolicyDocument' || code === 'MalformedPolicyDocumentException' || code === 'PackedPolicyTooLarge' || code === 'PackedPolicyTooLargeException') words = `the store refused the session policy (${code})`;
  else if (['InvalidClientTokenId', 'SignatureDoesNotMatch', 'InvalidAccessKeyId', 'Unknown'].includes(code) && status === 403) words = `the store does not accept S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY`;
  else if (code === 'MethodNotAllowed' || code === 'NotImplemented' || status === 405 || status === 501) words = `${where} does not answer STS AssumeRole: set S3_STS_ENDPOINT to the store's STS`;
  else words = `the store's STS failed`;
  return { code, status, words: err instanceof IamError ? words : `${words} (STS answered ${answered})` };
}
