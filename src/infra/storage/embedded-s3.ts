// Wiring for the embedded object storage: one call gives the ObjectStore, the CredentialIssuer
// and a running S3-compatible endpoint that share one master key and one data folder.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EmbeddedCredentialIssuer } from './embedded-credentials.ts';
import { LocalDiskObjectStore } from './local-disk-store.ts';
import { createS3Endpoint, startS3Server, type RunningS3Server, type S3Endpoint, type S3Logger } from './s3-endpoint.ts';
import { S3UrlPresigner } from './s3-presigner.ts';

export interface EmbeddedS3Options {
  /** Data folder for objects (one sub-folder per bucket). */
  rootDir: string;
  buckets: string[];
  /** 32 bytes; see loadOrCreateMasterKey. */
  masterKey: Buffer;
  logger: S3Logger;
  /** Where to listen (defaults 127.0.0.1 and a free port). */
  host?: string;
  port?: number;
  /**
   * URL clients reach the endpoint at, when it differs from the listening address (reverse
   * proxy, container port mapping). The proxy must pass the Host header through unchanged:
   * it is part of every signature.
   */
  publicUrl?: string;
  region?: string;
  minPartSize?: number;
  fsync?: boolean;
}

export interface EmbeddedS3 {
  store: LocalDiskObjectStore;
  issuer: EmbeddedCredentialIssuer;
  endpoint: S3Endpoint;
  server: RunningS3Server['server'];
  /** Public endpoint URL (the one handed to clients). */
  url: string;
  close(): Promise<void>;
}

export async function startEmbeddedS3(options: EmbeddedS3Options): Promise<EmbeddedS3> {
  const region = options.region ?? 'us-east-1';
  let publicUrl = options.publicUrl?.replace(/\/+$/, '');
  const endpointUrl = () => {
    if (!publicUrl) throw new Error('embedded S3 endpoint is not listening yet');
    return publicUrl;
  };
  const issuer = new EmbeddedCredentialIssuer({ masterKey: options.masterKey, region, endpoint: endpointUrl });
  const presigner = new S3UrlPresigner({ endpoint: endpointUrl, region, credentials: issuer.rootCredentials() });
  const store = new LocalDiskObjectStore({
    rootDir: options.rootDir,
    buckets: options.buckets,
    presigner,
    minPartSize: options.minPartSize,
    fsync: options.fsync,
  });
  const endpoint = createS3Endpoint({ store, resolveCredential: issuer.resolve, logger: options.logger, region });
  const running = await startS3Server(endpoint, { host: options.host, port: options.port });
  publicUrl ??= running.url;
  return { store, issuer, endpoint, server: running.server, url: publicUrl, close: running.close };
}

/**
 * Reads the 32-byte storage master key from `file`, creating it (mode 0600) on first use. Every
 * process sharing the data folder then issues and accepts the same credentials.
 */
export async function loadOrCreateMasterKey(file: string): Promise<Buffer> {
  for (let attempt = 0; attempt < 40; attempt++) {
    let key: Buffer | undefined;
    try {
      key = await readFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (key?.length === 32) return key;
    if (key === undefined) {
      const created = await createKeyFile(file);
      if (created) return created;
    }
    // Another process created the file and is still writing it.
    await sleep(50);
  }
  throw new Error(`${file} must hold exactly 32 bytes`);
}

async function createKeyFile(file: string): Promise<Buffer | undefined> {
  await mkdir(path.dirname(file), { recursive: true });
  const key = randomBytes(32);
  let handle;
  try {
    // "wx": when two processes start together, exactly one creates the key.
    handle = await open(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw err;
  }
  try {
    await handle.writeFile(key);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return key;
}
