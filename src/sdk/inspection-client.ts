// A small client of the inspection API, used by `npm run demo`, the tests and the benchmarks.
// It is also a worked example of the typical flow of the spec for anyone writing their own.
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { StorageCredentialsRecord } from '../shared/schemas/storage-credentials.ts';

export class ApiResponseError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what} answered ${status}: ${JSON.stringify(body)}`);
  }
}

export interface InspectionClientOptions {
  baseUrl: string;
  apiKey: string;
  organizationUuid?: string;
}

export type { StorageCredentialsRecord };

export class InspectionClient {
  token: string | undefined;

  constructor(readonly options: InspectionClientOptions) {}

  /** Raw call: returns status and parsed body, never throws on HTTP errors. */
  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const response = await fetch(`${this.options.baseUrl}${path}`, {
      method,
      headers: {
        'x-api-key': this.options.apiKey,
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(this.options.organizationUuid ? { 'vendor-organization-uuid': this.options.organizationUuid } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON; keep the text
    }
    return { status: response.status, body: parsed };
  }

  /** Call that must answer `expected`. */
  async expect(expected: number, method: string, path: string, body?: unknown): Promise<any> {
    const result = await this.request(method, path, body);
    if (result.status !== expected) throw new ApiResponseError(result.status, result.body, `${method} ${path}`);
    return result.body;
  }

  async login(username: string, password: string): Promise<{ api_token: string; expires_in: number }> {
    const body = await this.expect(200, 'POST', '/v1/auth/token/', { username, password });
    this.token = body.api_token;
    return body;
  }

  createAsset(asset: { name: string; type: number; latitude?: string; longitude?: string; description?: string }) {
    return this.expect(201, 'POST', '/v1/assets/', asset);
  }

  createInspection(body: Record<string, unknown>) {
    return this.expect(201, 'POST', '/v1/inspections', body);
  }

  getInspection(id: number) {
    return this.expect(200, 'GET', `/v1/inspections/${id}/`);
  }

  storageCredentials(id: number): Promise<StorageCredentialsRecord> {
    return this.expect(200, 'GET', `/v1/inspections/${id}/s3_credentials/`);
  }

  /** Uploads files under the credentials' prefix with a stock S3 client; returns the keys. */
  async upload(credentials: StorageCredentialsRecord, files: { name: string; body: Buffer }[], concurrency = 4): Promise<string[]> {
    const s3 = s3ClientFor(credentials);
    const keys = files.map((f) => `${credentials.key}${f.name}`);
    try {
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(concurrency, files.length) }, async () => {
          while (next < files.length) {
            const i = next++;
            await s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: keys[i], Body: files[i].body, ContentType: 'image/jpeg' }));
          }
        }),
      );
    } finally {
      s3.destroy();
    }
    return keys;
  }

  register(id: number, keys: string[]): Promise<{ nb_images_registered: number }> {
    return this.expect(200, 'POST', `/v1/inspections/${id}/register_images/`, { image_keys: keys });
  }

  process(id: number) {
    return this.expect(202, 'POST', `/v1/inspections/${id}/process/`, {});
  }

  /** Polls until the inspection leaves the working statuses; returns the final record. */
  async waitUntilSettled(id: number, options: { timeoutMs?: number; onStatus?: (status: number) => void } = {}): Promise<any> {
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    let last: number | undefined;
    for (;;) {
      const inspection = await this.getInspection(id);
      if (inspection.status !== last) options.onStatus?.(inspection.status);
      last = inspection.status;
      if (![2, 3, 4, 5, 12, 20, 25].includes(inspection.status)) return inspection;
      if (Date.now() > deadline) throw new Error(`inspection ${id} still in status ${inspection.status} after timeout`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }

  cameras(id: number): Promise<any[]> {
    return this.expect(200, 'GET', `/v1/inspections/${id}/cameras/`);
  }
}

export function s3ClientFor(credentials: StorageCredentialsRecord): S3Client {
  return new S3Client({
    region: credentials.region,
    endpoint: credentials.endpoint_override || undefined,
    forcePathStyle: Boolean(credentials.endpoint_override),
    credentials: { accessKeyId: credentials.access_key, secretAccessKey: credentials.secret_key, sessionToken: credentials.session_token },
  });
}
