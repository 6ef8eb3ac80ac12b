// Presigned GET URLs for the embedded endpoint, signed with the server's root credential using
// @smithy/signature-v4 (the same signer the AWS SDK uses), so any HTTP client can download an
// object until the URL expires.
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256, encodeKeyForPath, type SignableRequest } from './sigv4-common.ts';
import type { GetUrlPresigner } from './local-disk-store.ts';

export interface S3UrlPresignerOptions {
  /**
   * Origin clients will use to reach the endpoint (e.g. "http://files.example.org:9000").
   * The Host it names is part of the signature, so it must be the host clients really send.
   * A function lets the caller supply it once the server listens (port 0 in tests).
   */
  endpoint: string | (() => string);
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

const PAYLOAD_HEADER = new Set(['x-amz-content-sha256']);

/** SigV4 caps presigned URLs at one week. */
const MAX_EXPIRES_SECONDS = 7 * 24 * 3600;

export class S3UrlPresigner implements GetUrlPresigner {
  private readonly signer: SignatureV4;

  constructor(private readonly options: S3UrlPresignerOptions) {
    this.signer = new SignatureV4({
      service: 's3',
      region: options.region,
      credentials: options.credentials,
      sha256: Sha256,
      // S3 signs the path exactly as sent (no second encoding).
      uriEscapePath: false,
    });
  }

  async presignGet(
    bucket: string,
    key: string,
    expiresInSeconds: number,
    query: Record<string, string> = {},
  ): Promise<string> {
    if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_EXPIRES_SECONDS) {
      throw new RangeError('presigned URL lifetime must be an integer between 1 second and 7 days');
    }
    const base = new URL(typeof this.options.endpoint === 'function' ? this.options.endpoint() : this.options.endpoint);
    const request: SignableRequest = {
      method: 'GET',
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port ? Number(base.port) : undefined,
      path: `/${bucket}/${encodeKeyForPath(key)}`,
      query: { ...query },
      // S3 presigned URLs sign "UNSIGNED-PAYLOAD" as the payload hash; the signer reads it from
      // this header, which itself stays out of the URL and out of the signed headers.
      headers: { host: base.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    };
    const signed = await this.signer.presign(request, {
      expiresIn: expiresInSeconds,
      unsignableHeaders: PAYLOAD_HEADER,
      unhoistableHeaders: PAYLOAD_HEADER,
    });
    const search = Object.entries(signed.query ?? {})
      .map(([name, value]) => `${rfc3986(name)}=${rfc3986(String(value))}`)
      .join('&');
    return `${base.protocol}//${base.host}${signed.path}?${search}`;
  }
}

function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}
