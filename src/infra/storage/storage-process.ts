// The `storage` command: the embedded S3 endpoint run alone, on a data folder of its own, with a
// root credential (STORAGE_ROOT_ACCESS_KEY / STORAGE_ROOT_SECRET_KEY, or generated into
// DATA_DIR/secrets/storage-root.json) and STS AssumeRole for it. The services then use it through
// their S3 store settings (S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID = the root key, ...) exactly as
// they would use MinIO: a deployment without a cloud store gets storage on a machine of its own.
import crypto from 'node:crypto';
import path from 'node:path';
import type { Logger } from 'pino';
import { readOrCreateKey, readOrCreateSecretFile } from '../auth/key-files.ts';
import { prepareDataDir } from '../data-dir.ts';
import type { RootCredential } from './embedded-credentials.ts';
import { startEmbeddedS3, type EmbeddedS3 } from './embedded-s3.ts';
import type { ConnectionCaps } from '../http/connection-limits.ts';

export interface StorageProcessSettings {
  dataDir: string;
  host: string;
  port: number;
  publicUrl: string | undefined;
  bucket: string;
  region: string;
  root: RootCredential | undefined;
  /** Shortest AssumeRole DurationSeconds accepted (900, as AWS and MinIO). */
  stsMinDurationSeconds: number;
  corsOrigins: string[];
  multipartExpirySeconds: number;
  /** Multipart uploads in progress allowed under one temporary credential's prefix (0: no cap). */
  prefixMaxMultipartUploads: number;
  /** Connections held at once, in all and per client address (connection-limits.ts). */
  connections: ConnectionCaps;
  /** Time for a connection to send a request's headers, seconds. */
  headersTimeoutSeconds: number;
}

/** The configured root credential, or the one generated into the data folder on the first start. */
export function storageRootCredential(dataDir: string, configured: RootCredential | undefined): { credential: RootCredential; file: string | undefined } {
  if (configured) return { credential: configured, file: undefined };
  const name = 'storage-root.json';
  const raw = readOrCreateSecretFile(dataDir, name, () =>
    JSON.stringify({ accessKeyId: `OIROOT${crypto.randomBytes(10).toString('hex').toUpperCase()}`, secretAccessKey: crypto.randomBytes(30).toString('base64url') }, null, 2),
  );
  return { credential: JSON.parse(raw) as RootCredential, file: path.join(dataDir, 'secrets', name) };
}

export async function startStorageProcess(settings: StorageProcessSettings, logger: Logger): Promise<EmbeddedS3 & { rootFile: string | undefined }> {
  prepareDataDir(settings.dataDir);
  const { credential, file } = storageRootCredential(settings.dataDir, settings.root);
  const s3 = await startEmbeddedS3({
    rootDir: path.join(settings.dataDir, 'objects'),
    buckets: [settings.bucket],
    masterKey: readOrCreateKey(settings.dataDir, 'storage-master.key'),
    logger,
    host: settings.host,
    port: settings.port,
    publicUrl: settings.publicUrl,
    region: settings.region,
    root: credential,
    sts: { minDurationSeconds: settings.stsMinDurationSeconds, maxDurationSeconds: 12 * 3600 },
    corsOrigins: () => settings.corsOrigins,
    multipartExpiryMs: settings.multipartExpirySeconds ? settings.multipartExpirySeconds * 1000 : Infinity,
    maxOpenUploadsPerPrefix: settings.prefixMaxMultipartUploads,
    connections: settings.connections,
    headersTimeoutMs: settings.headersTimeoutSeconds * 1000,
  });
  return Object.assign(s3, { rootFile: file });
}
