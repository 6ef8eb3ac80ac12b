// Wiring for the embedded object storage: one call gives the ObjectStore, the CredentialIssuer
// and a running S3-compatible endpoint that share one master key and one data folder.
import { EmbeddedCredentialIssuer, type RootCredential } from './embedded-credentials.ts';
import { LocalDiskObjectStore } from './local-disk-store.ts';
import { createS3Endpoint, type S3Endpoint, type S3Logger } from './s3-endpoint.ts';
import { startS3Server, type RunningS3Server } from './s3-server.ts';
import { defaultConnectionCaps, type ConnectionCaps } from '../http/connection-limits.ts';
import { S3UrlPresigner } from './s3-presigner.ts';
import type { PrefixLiveness } from './prefix-gate.ts';
import type { RevokedCredentials } from './revoked-credentials.ts';
import type { AllowedOrigins } from './s3-cors.ts';

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
  /** See S3EndpointOptions: revocation of temporary credentials whose owner is gone. */
  isPrefixLive?: PrefixLiveness;
  prefixCacheMs?: number;
  /** See S3EndpointOptions: single temporary credentials revoked before they expire. */
  revokedCredentials?: RevokedCredentials;
  /** Largest PutObject / UploadPart body (default 5 GiB); smaller in tests. */
  maxUploadSize?: number;
  /** Bytes allowed under one temporary credential's prefix (default: no quota). */
  prefixQuotaBytes?: number;
  /** Multipart uploads in progress allowed under one temporary credential's prefix (default: no cap). */
  maxOpenUploadsPerPrefix?: number;
  /**
   * Connections held at once, in all and per client address (s3-server.ts); default: from the
   * process's open-file limit (connection-limits.ts). `{ max: 0 }`: no cap.
   */
  connections?: ConnectionCaps;
  /** Time for a connection to send a request's headers (default 10 s). */
  headersTimeoutMs?: number;
  /** A request whose body stops arriving for this long is cut (default 60 s). */
  bodyIdleTimeoutMs?: number;
  /** Leftovers of interrupted writes are removed after this long (default 1 hour). */
  tmpExpiryMs?: number;
  /** Multipart uploads are aborted this long after they started (default 7 days). */
  multipartExpiryMs?: number;
  /** How often abandoned files are swept (default 10 minutes; also once at start). */
  sweepIntervalMs?: number;
  /** Web origins whose pages may call the endpoint (CORS); asked per request. Default: none. */
  corsOrigins?: AllowedOrigins;
  /** The root credential (the `storage` command's STORAGE_ROOT_*); default derived from masterKey. */
  root?: RootCredential;
  /** Answer STS AssumeRole for the root credential, with these bounds on DurationSeconds. */
  sts?: { minDurationSeconds: number; maxDurationSeconds: number };
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
  const issuer = new EmbeddedCredentialIssuer({ masterKey: options.masterKey, region, endpoint: endpointUrl, root: options.root });
  const presigner = new S3UrlPresigner({ endpoint: endpointUrl, region, credentials: issuer.rootCredentials() });
  const store = new LocalDiskObjectStore({
    rootDir: options.rootDir,
    buckets: options.buckets,
    presigner,
    minPartSize: options.minPartSize,
    fsync: options.fsync,
    tmpExpiryMs: options.tmpExpiryMs,
    multipartExpiryMs: options.multipartExpiryMs,
  });
  const endpoint = createS3Endpoint({
    store,
    resolveCredential: issuer.resolve,
    logger: options.logger,
    region,
    isPrefixLive: options.isPrefixLive,
    prefixCacheMs: options.prefixCacheMs,
    revokedCredentials: options.revokedCredentials,
    maxUploadSize: options.maxUploadSize,
    prefixQuotaBytes: options.prefixQuotaBytes,
    maxOpenUploadsPerPrefix: options.maxOpenUploadsPerPrefix,
    corsOrigins: options.corsOrigins,
    sts: options.sts && { issuer, ...options.sts },
  });
  // Files left by a crash (kill -9 mid-upload) or by clients that never finished: swept now and
  // periodically. Only the process serving the endpoint sweeps.
  const swept = await store.startSweeping(options.sweepIntervalMs ?? 10 * 60_000, (err) => options.logger.warn({ err }, 'storage sweep failed'));
  if (swept.tmpFiles || swept.uploads) options.logger.warn(swept, 'removed abandoned upload files (left by a crash or by clients that never finished)');
  let running: RunningS3Server;
  try {
    running = await startS3Server(endpoint, {
      host: options.host,
      port: options.port,
      connections: options.connections ?? defaultConnectionCaps().storage,
      headersTimeoutMs: options.headersTimeoutMs,
      bodyIdleTimeoutMs: options.bodyIdleTimeoutMs,
      logger: options.logger,
    });
  } catch (err) {
    await store.stopSweeping();
    throw err;
  }
  publicUrl ??= running.url;
  const close = async () => {
    await store.stopSweeping();
    await running.close();
  };
  return { store, issuer, endpoint, server: running.server, url: publicUrl, close };
}
