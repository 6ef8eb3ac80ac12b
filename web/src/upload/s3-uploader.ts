// Uploads files to the S3 endpoint with the AWS SDK v3, in the browser: one PutObject for a photo,
// a multipart upload above 16 MiB (upload-plan.ts), a shared pool of 4 requests in flight, each
// failed request retried per the policy of upload-plan.ts, AbortMultipartUpload on give-up.
// Loaded on demand by the Upload page (the SDK is its own chunk).
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, PutObjectCommand, S3Client, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { extensionOf, planUpload, retryDecision, type FailureInfo } from '../lib/upload-plan';
import { trackProgress, XhrHttpHandler } from './xhr-handler';

export interface StorageCredentials {
  access_key: string;
  secret_key: string;
  session_token: string;
  expiration: string;
  bucket: string;
  key: string;
  region: string;
  endpoint_override: string;
}

export interface UploaderOptions {
  /** Fetches fresh temporary credentials (GET /v1/inspections/{id}/s3_credentials/). */
  fetchCredentials: () => Promise<StorageCredentials>;
  /** Where the S3 endpoint is when the credentials do not say (the console's storage_url). */
  fallbackEndpoint: string;
  concurrency?: number;
}

export interface FileUpload {
  file: Blob;
  key: string;
  contentType: string;
  /** Bytes of this file uploaded so far (goes back when a request is retried). */
  onProgress: (bytes: number) => void;
  /** A request failed and will be tried again (attempt n just failed). */
  onRetry?: (attempt: number, reason: string) => void;
  signal?: AbortSignal;
}

const CONTENT_TYPES: Record<string, string> = { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', tif: 'image/tiff', tiff: 'image/tiff', dng: 'image/x-adobe-dng' };

export function contentTypeOf(file: File): string {
  return file.type || CONTENT_TYPES[extensionOf(file.name)] || 'application/octet-stream';
}

/** Renew credentials this long before they expire. */
const RENEW_BEFORE_MS = 5 * 60_000;

export class S3Uploader {
  private credentials: StorageCredentials | undefined;
  private renewAt = 0;
  private client: S3Client | undefined;
  private pending: Promise<void> | undefined;
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly concurrency: number;

  constructor(private readonly options: UploaderOptions) {
    this.concurrency = options.concurrency ?? 4;
  }

  /** The credentials' prefix (keys must start with it) and bucket; fetched if needed. */
  async target(): Promise<{ bucket: string; prefix: string }> {
    const c = await this.ensureCredentials();
    return { bucket: c.bucket, prefix: c.key };
  }

  private async ensureCredentials(force = false): Promise<StorageCredentials> {
    const fresh = this.credentials && Date.now() < this.renewAt;
    if (!force && fresh) return this.credentials!;
    // One refresh shared by every request that needs it.
    this.pending ??= (async () => {
      const fetchedAt = Date.now();
      const c = await this.options.fetchCredentials();
      this.credentials = c;
      // Renewed 5 minutes before they expire, or at 3/4 of their life when that is shorter.
      const expires = Date.parse(c.expiration);
      this.renewAt = expires - Math.min(RENEW_BEFORE_MS, (expires - fetchedAt) / 4);
      this.client?.destroy();
      this.client = new S3Client({
        region: c.region || 'us-east-1',
        endpoint: c.endpoint_override || this.options.fallbackEndpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: c.access_key, secretAccessKey: c.secret_key, sessionToken: c.session_token, expiration: new Date(c.expiration) },
        requestHandler: new XhrHttpHandler() as never,
        // Retries are ours (retryDecision), per request, with progress reset; not the SDK's too.
        maxAttempts: 1,
        // The SigV4 payload hash already protects the body; no CRC32 in JavaScript on top.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
    })().finally(() => (this.pending = undefined));
    await this.pending;
    return this.credentials!;
  }

  private async slot<T>(run: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await run();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  /** One S3 request in a pool slot, retried per the policy; `body` is re-read on each attempt. */
  private async request<T>(send: (client: S3Client) => Promise<T>, upload: FileUpload | undefined, resetProgress?: () => void): Promise<T> {
    return this.slot(async () => {
      for (let attempt = 1; ; attempt++) {
        await this.ensureCredentials();
        try {
          return await send(this.client!);
        } catch (err) {
          if (upload?.signal?.aborted) throw err;
          resetProgress?.();
          const decision = retryDecision(failureOf(err), attempt);
          if (!decision.retry) throw err;
          upload?.onRetry?.(attempt, errorMessage(err));
          if (decision.refreshCredentials) await this.ensureCredentials(true);
          await sleep(decision.delayMs, upload?.signal);
        }
      }
    });
  }

  async upload(upload: FileUpload): Promise<void> {
    const { bucket } = await this.target();
    const plan = planUpload(upload.file.size);
    if (plan.kind === 'single') {
      await this.request(
        async (client) => {
          // Read into memory inside the slot: at most `concurrency` bodies held at once.
          const body = new Uint8Array(await upload.file.arrayBuffer());
          trackProgress(body, (loaded) => upload.onProgress(Math.min(loaded, body.byteLength)));
          await client.send(new PutObjectCommand({ Bucket: bucket, Key: upload.key, Body: body, ContentType: upload.contentType }), { abortSignal: upload.signal });
          upload.onProgress(body.byteLength);
        },
        upload,
        () => upload.onProgress(0),
      );
      return;
    }

    const created = await this.request((client) => client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: upload.key, ContentType: upload.contentType }), { abortSignal: upload.signal }), upload);
    const uploadId = created.UploadId!;
    const partBytes = new Map<number, number>();
    // One part given up stops the others (their upload is about to be aborted anyway).
    const stopParts = new AbortController();
    upload.signal?.addEventListener('abort', () => stopParts.abort(), { once: true });
    const partUpload = { ...upload, signal: stopParts.signal };
    const report = () => upload.onProgress([...partBytes.values()].reduce((a, b) => a + b, 0));
    try {
      const etags = await Promise.all(
        plan.parts.map((part) =>
          this.request(
            async (client) => {
              const body = new Uint8Array(await upload.file.slice(part.start, part.end).arrayBuffer());
              trackProgress(body, (loaded) => {
                partBytes.set(part.number, Math.min(loaded, body.byteLength));
                report();
              });
              const out = await client.send(new UploadPartCommand({ Bucket: bucket, Key: upload.key, UploadId: uploadId, PartNumber: part.number, Body: body }), { abortSignal: stopParts.signal });
              partBytes.set(part.number, body.byteLength);
              report();
              return out.ETag!;
            },
            partUpload,
            () => {
              partBytes.set(part.number, 0);
              report();
            },
          ),
        ),
      );
      await this.request(
        (client) =>
          client.send(
            new CompleteMultipartUploadCommand({
              Bucket: bucket,
              Key: upload.key,
              UploadId: uploadId,
              MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: plan.parts[i].number })) },
            }),
          ),
        upload,
      );
    } catch (err) {
      stopParts.abort();
      // Given up: free the parts on the server (best effort; the server also sweeps after 7 days).
      await this.client?.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.key, UploadId: uploadId })).catch(() => undefined);
      throw err;
    }
  }

  destroy(): void {
    this.client?.destroy();
  }
}

export function failureOf(err: unknown): FailureInfo {
  const e = err as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  return { name: e?.Code ?? e?.name, status: e?.$metadata?.httpStatusCode };
}

export function errorMessage(err: unknown): string {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  // Our own network errors (xhr-handler.ts) say it all in their message.
  const name = e?.name && !['Error', 'NetworkError', 'TimeoutError', 'AbortError'].includes(e.name) ? e.name : undefined;
  const text = e?.message && e.message !== 'UnknownError' ? e.message : undefined;
  return [name, text ?? (status ? `HTTP ${status}` : 'unknown error')].filter(Boolean).join(': ');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      const err = new Error('Request aborted');
      err.name = 'AbortError';
      reject(err);
    }, { once: true });
  });
}
