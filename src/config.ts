// Configuration comes from environment variables only, read once in main and passed down
// (no module reads process.env on its own, so tests can build any number of systems side by side).
// Every variable is listed, with its default, in the README's configuration table.
// Past 350 lines: every variable is read and checked here and nowhere else (docs/CONVENTIONS.md).
import path from 'node:path';
import { ENGINE_NAMES } from './cloud/processing/engines.ts';
import { DENSE_DEFAULT_MAX_IMAGE_SIZE } from './cloud/processing/colmap/stages/dense-plan.ts';
import { defaultEngineName, findsExecutable, type ExecutableProbe } from './cloud/processing/engine-default.ts';
import { DEFAULT_IMAGE_LIMITS } from './shared/images/image-limits.ts';
import { PROCESSING_BACKENDS } from './inspection/pipeline/output-options.ts';

export interface Config {
  /** Folder for the embedded database, the embedded object store, secrets and e-mails. */
  dataDir: string;
  /** PostgreSQL connection string; when empty the embedded PGlite database in dataDir is used. */
  databaseUrl: string | undefined;
  host: string;
  inspectionPort: number;
  cloudPort: number;
  storagePort: number;
  /** Public base URLs; derived from host and ports when not set. */
  inspectionPublicUrl: string | undefined;
  cloudPublicUrl: string | undefined;
  storagePublicUrl: string | undefined;
  /** Where the inspection service reaches the cloud service (its public HTTP API). */
  cloudUrl: string | undefined;
  /** Cloud client credentials of the inspection service; bootstrapped into dataDir when empty. */
  cloudClientId: string | undefined;
  cloudClientSecret: string | undefined;
  storageBucket: string;
  storageRegion: string;
  /** Lifetime of temporary storage credentials, seconds. */
  storageCredentialsTtl: number;
  /** Bytes clients may store under one project's (inspection's) prefix; 0: no quota. */
  storagePrefixQuotaBytes: number;
  /** Multipart uploads not completed this many seconds after they started are removed. */
  storageMultipartExpirySeconds: number;
  /** Inspection service: bytes the clients of one organization (or user without one) may store over its inspections; 0: no quota. */
  storageOrganizationQuotaBytes: number;
  /** Inspection service: measurements / annotations one inspection may hold; 0: no cap. */
  inspectionMaxMeasurements: number;
  inspectionMaxAnnotations: number;
  /** Multipart uploads in progress allowed under one project's (inspection's) prefix; 0: no cap. */
  storagePrefixMaxMultipartUploads: number;
  /** Embedded S3 endpoint: connections held at once, in all and per client address (unset: from the open-file limit; 0: no cap). */
  storageMaxConnections: number | undefined;
  storageMaxConnectionsPerAddress: number | undefined;
  /** Embedded S3 endpoint: time for a connection to send a request's headers, seconds. */
  storageHeadersTimeoutSeconds: number;
  /** An external S3 store (S3_BUCKET set) instead of the embedded one; its credentials from STS. */
  s3: S3Config | undefined;
  /** The `storage` command's root credential; unset: generated into dataDir/secrets. */
  storageRoot: { accessKeyId: string; secretAccessKey: string } | undefined;
  /** The `storage` command: shortest AssumeRole DurationSeconds it accepts. */
  storageStsMinDurationSeconds: number;
  /** Lifetime of inspection-service tokens (`expires_in`), seconds. */
  inspectionTokenTtl: number;
  /** Lifetime of cloud OAuth2 tokens (`expires_in`), seconds. */
  cloudTokenTtl: number;
  /** `iss` of cloud tokens; the organization claim is named `<issuer domain>/org`. */
  cloudIssuer: string;
  /** Photogrammetry engine used by the cloud service (the default of `start_processing`). */
  engine: string;
  /** Further engines a `start_processing` request may choose (its `engine` field), besides `engine`. */
  engines: string[];
  /** Inspection service: the cloud engine asked for each `processing_backend` (none: the cloud's default). */
  processingBackendEngines: Record<string, string>;
  /** Test knob of the exif engine (like NodeODM's --test_seconds): seconds it takes at least. */
  engineSimulatedSeconds: number;
  /** colmap and nodeodm engines: a run taking longer fails with 10002 (0: no limit). */
  engineTimeLimitSeconds: number;
  /** colmap and nodeodm engines: parent folder of their per-run work folders (default dataDir/work). */
  engineWorkDir: string | undefined;
  /** colmap engine: the colmap executable. */
  colmapBinary: string;
  /** colmap engine: whether the dense stages run (dense cloud, mesh, DSM/DTM, orthomosaic; COLMAP_DENSE, default on). */
  colmapDense: boolean;
  /** colmap engine: longest side of the undistorted images and depth maps of the dense stages (DENSE_MAX_IMAGE_SIZE). */
  denseMaxImageSize: number;
  /** Inspection service, is_video inspections: the ffmpeg and ffprobe executables (frame extraction). */
  ffmpegBinary: string;
  ffprobeBinary: string;
  /** Inspection service and engines: largest photo file read into memory and largest photo decoded (shared/images/image-limits.ts). */
  imageMaxBytes: number;
  imageMaxPixels: number;
  /** nodeodm engine: base URL of the NodeODM (or ClusterODM) node, and its optional token. */
  nodeodmUrl: string | undefined;
  nodeodmToken: string | undefined;
  /** nodeodm engine: seconds between two polls of the task's state. */
  nodeodmPollSeconds: number;
  /** nodeodm engine: extra ODM options, a JSON object (e.g. {"pc-quality": "high"}), applied last. */
  nodeodmOptions: string | undefined;
  /** Serve the web console at `/` of the inspection service (web/dist, built by `npm start`). */
  consoleEnabled: boolean;
  /** Web console: tile URL template of a basemap (e.g. https://tile.example/{z}/{x}/{y}.png); none: plain background. */
  consoleBasemapUrl: string | undefined;
  /** Origins, besides the inspection service's own, whose pages may call the embedded S3 endpoint (CORS). */
  consoleOrigins: string[];
  /** Whether `serve` also runs the job workers. */
  runWorkers: boolean;
  /** Create the demo organization, user, API key and allowance on the first start. */
  bootstrapDemo: boolean;
  logLevel: string;
  /** pg-boss heartbeat: a job whose worker died is retried after about this many seconds. */
  jobHeartbeatSeconds: number;
  /** SMTP URL for e-mail; when empty, messages are written as .eml files under dataDir/mail. */
  smtpUrl: string | undefined;
  /** From address of the e-mails the services send. */
  mailFrom: string;
  /** Fastify's trustProxy: whose X-Forwarded-For to believe (per-address throttling, logs). */
  trustProxy: boolean | number | string[];
  /** HTTP servers of both services: time to receive a request's headers, seconds. */
  httpHeadersTimeoutSeconds: number;
  /** Time to receive a whole request, body included, seconds (0: no limit). */
  httpRequestTimeoutSeconds: number;
  /** An idle kept-alive connection is closed after this many seconds. */
  httpKeepAliveTimeoutSeconds: number;
  /** Requests whose bodies are still arriving, per service; more answer 503 (0: no cap). */
  httpMaxUnfinishedBodies: number;
  /** Connections each HTTP server of the services holds at once (unset: from the open-file limit; 0: no cap). */
  httpMaxConnections: number | undefined;
  /** Connections each of them holds from one client address, TRUST_PROXY's proxies excepted (unset: a quarter of the above, at most 256; 0: no cap). */
  httpMaxConnectionsPerAddress: number | undefined;
  /** Token calls (`/v1/auth/token/`, `/oauth2/token/`) per client address per window (0: no limit). */
  authRateLimitPerAddress: number;
  /** Failed token calls per username / client_id per window (0: no limit). */
  authRateLimitPerAccount: number;
  authRateLimitWindowSeconds: number;
  /** Longest wait before a token call on an account failing from many addresses (login-throttle.ts), ms (0: none). */
  authSlowdownMaxMs: number;
  /** Lifetime of a share token made without `expires_in` (and of a report's), seconds. */
  shareTokenTtlSeconds: number;
  /** Longest lifetime of any share token, seconds: `expires_in` beyond is refused, older tokens stop at use. */
  shareTokenMaxTtlSeconds: number;
  /** Lifetime of the presigned URLs handed to share holders (photos, outputs), seconds; never past the token's expiry. */
  shareTokenUrlTtlSeconds: number;
  /** Days an inspection's data is kept when its organization sets none (inspection/retention); 0: for ever. */
  retentionDays: number;
  /** Cron expression (UTC) of the daily retention sweep. */
  /** WEBHOOK_ALLOW_PRIVATE_ADDRESSES: webhooks may go to private, loopback, link-local addresses (tests; closed networks). */
  webhookAllowPrivateAddresses: boolean;
  /** WEBHOOK_RETRY_BASE_SECONDS: first retry delay of a failed webhook delivery, doubling (0: retry at once; tests). */
  webhookRetryBaseSeconds: number;
  /** WEBHOOK_MAX_ATTEMPTS: attempts per webhook event at most (within 24 h). */
  webhookMaxAttempts: number;
  retentionSchedule: string;
}

export interface S3Config {
  /** undefined: AWS S3 of the region. */
  endpoint: string | undefined;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  /** STS endpoint for AssumeRole; default the S3 endpoint (MinIO, Ceph RGW, the storage process). */
  stsEndpoint: string | undefined;
  /** The role AssumeRole assumes (needed on AWS; MinIO ignores it). */
  roleArn: string | undefined;
  /** What clients reach (endpoint_override, presigned URLs); default the S3 endpoint. */
  publicEndpoint: string | undefined;
  /** shared: one role (roleArn), the session policy limits the prefix; per-prefix: a role per prefix (per-prefix-roles.ts). */
  roleMode: 'shared' | 'per-prefix';
  /** The services' own user (accessKeyId's), the only principal per-prefix roles trust. */
  userArn: string | undefined;
  /** IAM (per-prefix roles, the shared role's MaxSessionDuration); default the STS endpoint, or AWS's global IAM. */
  iamEndpoint: string;
  /** Start although the start-up self-check of the issued credentials failed (logged as a warning). */
  unsafeRoleOk: boolean;
}

/** A bad value stops the start (main prints the message, which names every bad variable). */
export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/**
 * Reads and checks environment variables, one kind per method. A bad value is recorded (with the
 * variable's name) and the fallback returned, so that one start reports every mistake at once.
 * An empty value counts as unset.
 */
class EnvReader {
  readonly problems: string[] = [];
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  string(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value;
  }

  int(name: string, fallback: number, bounds: { min?: number; max?: number } = {}): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const min = bounds.min ?? 0;
    const n = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n) || n < min || (bounds.max !== undefined && n > bounds.max)) {
      const range = bounds.max !== undefined ? `an integer from ${min} to ${bounds.max}` : `an integer of at least ${min}`;
      return this.fail(name, `must be ${range}, got "${raw}"`, fallback);
    }
    return n;
  }

  /** An integer of at least 0, or undefined when unset (the default is worked out later). */
  optionalInt(name: string): number | undefined {
    return this.string(name) === undefined ? undefined : this.int(name, 0);
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const v = raw.trim().toLowerCase();
    if (TRUE.includes(v)) return true;
    if (FALSE.includes(v)) return false;
    return this.fail(name, `must be true or false (also 1/0, yes/no, on/off), got "${raw}"`, fallback);
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const v = raw.trim().toLowerCase() as T;
    return values.includes(v) ? v : this.fail(name, `must be one of ${values.join(', ')}, got "${raw}"`, fallback);
  }

  /** A comma-separated list: trimmed, lower case, without blanks or repeats; each item one of `values` when given. */
  list(name: string, values?: readonly string[]): string[] {
    const items = [...new Set((this.string(name) ?? '').split(',').map((v) => v.trim().toLowerCase()).filter(Boolean))];
    const bad = values ? items.filter((v) => !values.includes(v)) : [];
    return bad.length ? this.fail(name, `items must be among ${values!.join(', ')}, got "${bad.join(', ')}"`, []) : items;
  }

  /** An absolute URL with one of the given schemes (e.g. ['http:', 'https:']). */
  url(name: string, schemes: readonly string[]): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    let url: URL | undefined;
    try {
      url = new URL(raw.trim());
    } catch {
      url = undefined;
    }
    if (!url || !schemes.includes(url.protocol)) return this.fail(name, `must be a URL (${schemes.map((s) => s.slice(0, -1)).join(' or ')}), got "${redactUrl(raw)}"`, undefined);
    return raw.trim();
  }

  /** A JSON object, kept as its text. */
  jsonObject(name: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    try {
      const value: unknown = JSON.parse(raw);
      if (value && typeof value === 'object' && !Array.isArray(value)) return raw;
    } catch {
      // reported below
    }
    return this.fail(name, 'must be a JSON object', undefined);
  }

  /** `mapper=colmap,vortex=nodeodm`: processing_backend -> cloud engine. */
  backendEngines(name: string): Record<string, string> {
    const map: Record<string, string> = {};
    for (const pair of this.list(name)) {
      const [backend, engine, extra] = pair.split('=').map((v) => v.trim());
      if (!(PROCESSING_BACKENDS as readonly string[]).includes(backend) || !engine || extra !== undefined || !(ENGINE_NAMES as readonly string[]).includes(engine)) {
        return this.fail(name, `"${pair}" is not <processing_backend>=<engine> with processing_backend mapper or vortex and engine one of ${ENGINE_NAMES.join(', ')}`, {});
      }
      map[backend] = engine;
    }
    return map;
  }

  /** A comma-separated list of web origins (scheme://host[:port]), each checked and normalised. */
  origins(name: string): string[] {
    const raw = this.string(name);
    if (!raw?.trim()) return [];
    const origins: string[] = [];
    for (const item of raw.split(',').map((x) => x.trim()).filter(Boolean)) {
      let url: URL | undefined;
      try {
        url = new URL(item);
      } catch {
        url = undefined;
      }
      if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== item.replace(/\/$/, '')) {
        return this.fail(name, `must be a comma-separated list of origins such as https://console.example.com, got "${item}"`, []);
      }
      origins.push(url.origin);
    }
    return origins;
  }

  /** TRUST_PROXY: false, true, a number of proxy hops, or a comma-separated list of proxy addresses/CIDRs. */
  trustProxy(name: string): boolean | number | string[] {
    const raw = this.string(name);
    if (raw === undefined) return false;
    const v = raw.trim().toLowerCase();
    if (TRUE.includes(v) && v !== '1') return true;
    if (FALSE.includes(v)) return false;
    if (/^\d+$/.test(v)) return Number(v);
    const items = v.split(',').map((x) => x.trim()).filter(Boolean);
    if (items.length && items.every((x) => /^[0-9a-f.:]+(\/\d{1,3})?$/.test(x))) return items;
    return this.fail(name, `must be true, false, a number of proxy hops or a comma-separated list of addresses, got "${raw}"`, false);
  }

  private fail<T>(name: string, message: string, fallback: T): T {
    this.problems.push(`${name} ${message}`);
    return fallback;
  }
}

/** Hides a password in a URL quoted in an error message. */
function redactUrl(raw: string): string {
  return raw.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
}

/**
 * `probe` tells whether an executable resolves (injectable for tests): without `ENGINE`, the
 * default engine is `colmap` where COLMAP_BINARY (default `colmap`, looked up on env.PATH) resolves,
 * else `exif` (engine-default.ts).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, probe: ExecutableProbe = findsExecutable): Config {
  const v = new EnvReader(env);
  const http = ['http:', 'https:'];
  const port = (name: string, fallback: number) => v.int(name, fallback, { max: 65535 });
  const seconds = (name: string, fallback: number, min = 0) => v.int(name, fallback, { min });
  const config: Config = {
    dataDir: path.resolve(v.string('DATA_DIR') ?? './data'),
    databaseUrl: v.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    host: v.string('HOST')?.trim() ?? '127.0.0.1',
    inspectionPort: port('INSPECTION_PORT', 8000),
    cloudPort: port('CLOUD_PORT', 8001),
    storagePort: port('STORAGE_PORT', 9000),
    inspectionPublicUrl: v.url('INSPECTION_PUBLIC_URL', http),
    cloudPublicUrl: v.url('CLOUD_PUBLIC_URL', http),
    storagePublicUrl: v.url('STORAGE_PUBLIC_URL', http),
    cloudUrl: v.url('CLOUD_URL', http),
    cloudClientId: v.string('CLOUD_CLIENT_ID'),
    cloudClientSecret: v.string('CLOUD_CLIENT_SECRET'),
    storageBucket: v.string('STORAGE_BUCKET') ?? 'inspection-data',
    storageRegion: v.string('STORAGE_REGION') ?? 'us-east-1',
    storageCredentialsTtl: seconds('STORAGE_CREDENTIALS_TTL', 12 * 3600, 1),
    storagePrefixQuotaBytes: v.int('STORAGE_PREFIX_QUOTA_BYTES', 100 * 1024 ** 3),
    storageMultipartExpirySeconds: seconds('STORAGE_MULTIPART_EXPIRY_SECONDS', 7 * 24 * 3600),
    storageOrganizationQuotaBytes: v.int('STORAGE_ORGANIZATION_QUOTA_BYTES', 1024 ** 4),
    inspectionMaxMeasurements: v.int('INSPECTION_MAX_MEASUREMENTS', 10_000),
    inspectionMaxAnnotations: v.int('INSPECTION_MAX_ANNOTATIONS', 10_000),
    storagePrefixMaxMultipartUploads: v.int('STORAGE_PREFIX_MAX_MULTIPART_UPLOADS', 100),
    storageMaxConnections: v.optionalInt('STORAGE_MAX_CONNECTIONS'),
    storageMaxConnectionsPerAddress: v.optionalInt('STORAGE_MAX_CONNECTIONS_PER_ADDRESS'),
    storageHeadersTimeoutSeconds: v.int('STORAGE_HEADERS_TIMEOUT_SECONDS', 10, { min: 1, max: 60 }),
    s3: undefined,
    storageRoot: undefined,
    storageStsMinDurationSeconds: seconds('STORAGE_STS_MIN_DURATION_SECONDS', 900, 1),
    inspectionTokenTtl: seconds('INSPECTION_TOKEN_TTL', 24 * 3600, 1),
    cloudTokenTtl: seconds('CLOUD_TOKEN_TTL', 172800, 1),
    cloudIssuer: v.url('CLOUD_ISSUER', http) ?? 'https://cloud.localhost',
    engine: v.oneOf('ENGINE', ENGINE_NAMES, defaultEngineName(v.string('COLMAP_BINARY') ?? 'colmap', env.PATH, probe)),
    engines: v.list('ENGINES', ENGINE_NAMES),
    processingBackendEngines: v.backendEngines('PROCESSING_BACKEND_ENGINES'),
    engineSimulatedSeconds: seconds('ENGINE_SIMULATED_SECONDS', 0),
    engineTimeLimitSeconds: seconds('ENGINE_TIME_LIMIT_SECONDS', 12 * 3600),
    engineWorkDir: v.string('ENGINE_WORK_DIR') && path.resolve(v.string('ENGINE_WORK_DIR')!),
    colmapBinary: v.string('COLMAP_BINARY') ?? 'colmap',
    colmapDense: v.bool('COLMAP_DENSE', true),
    denseMaxImageSize: v.int('DENSE_MAX_IMAGE_SIZE', DENSE_DEFAULT_MAX_IMAGE_SIZE, { min: 64, max: 8192 }),
    ffmpegBinary: v.string('FFMPEG_BINARY') ?? 'ffmpeg',
    // ffprobe ships with ffmpeg: beside FFMPEG_BINARY when that is a path.
    ffprobeBinary: v.string('FFPROBE_BINARY') ?? (v.string('FFMPEG_BINARY')?.includes('/') ? path.join(path.dirname(v.string('FFMPEG_BINARY')!), 'ffprobe') : 'ffprobe'),
    imageMaxBytes: v.int('IMAGE_MAX_BYTES', DEFAULT_IMAGE_LIMITS.maxBytes, { min: 1024 }),
    imageMaxPixels: v.int('IMAGE_MAX_PIXELS', DEFAULT_IMAGE_LIMITS.maxPixels, { min: 1 }),
    nodeodmUrl: v.url('NODEODM_URL', http),
    nodeodmToken: v.string('NODEODM_TOKEN'),
    nodeodmPollSeconds: seconds('NODEODM_POLL_SECONDS', 5, 1),
    nodeodmOptions: v.jsonObject('NODEODM_OPTIONS'),
    consoleEnabled: v.bool('CONSOLE_ENABLED', true),
    consoleBasemapUrl: v.string('CONSOLE_BASEMAP_URL')?.trim() || undefined,
    consoleOrigins: v.origins('CONSOLE_ORIGINS'),
    runWorkers: v.bool('RUN_WORKERS', true),
    bootstrapDemo: v.bool('BOOTSTRAP_DEMO', true),
    logLevel: v.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    jobHeartbeatSeconds: seconds('JOB_HEARTBEAT_SECONDS', 10, 1),
    smtpUrl: v.url('SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: v.string('MAIL_FROM') ?? 'Open Inspection <noreply@localhost>',
    trustProxy: v.trustProxy('TRUST_PROXY'),
    httpHeadersTimeoutSeconds: seconds('HTTP_HEADERS_TIMEOUT_SECONDS', 10, 1),
    httpRequestTimeoutSeconds: seconds('HTTP_REQUEST_TIMEOUT_SECONDS', 120),
    httpKeepAliveTimeoutSeconds: seconds('HTTP_KEEP_ALIVE_TIMEOUT_SECONDS', 5, 1),
    httpMaxUnfinishedBodies: v.int('HTTP_MAX_UNFINISHED_BODIES', 32),
    httpMaxConnections: v.optionalInt('HTTP_MAX_CONNECTIONS'),
    httpMaxConnectionsPerAddress: v.optionalInt('HTTP_MAX_CONNECTIONS_PER_ADDRESS'),
    authRateLimitPerAddress: v.int('AUTH_RATE_LIMIT_PER_ADDRESS', 300),
    authRateLimitPerAccount: v.int('AUTH_RATE_LIMIT_PER_ACCOUNT', 10),
    authRateLimitWindowSeconds: seconds('AUTH_RATE_LIMIT_WINDOW_SECONDS', 300, 1),
    authSlowdownMaxMs: v.int('AUTH_SLOWDOWN_MAX_MS', 3000, { max: 30_000 }),
    shareTokenTtlSeconds: seconds('SHARE_TOKEN_TTL_SECONDS', 30 * 24 * 3600, 60),
    shareTokenMaxTtlSeconds: seconds('SHARE_TOKEN_MAX_TTL_SECONDS', 90 * 24 * 3600, 60),
    shareTokenUrlTtlSeconds: v.int('SHARE_TOKEN_URL_TTL_SECONDS', 600, { min: 1, max: 3600 }),
    // 0 by default: an installation deletes nobody's photos until its administrator chooses a period.
    retentionDays: v.int('RETENTION_DAYS', 0, { max: 100 * 365 }),
    retentionSchedule: v.string('RETENTION_SCHEDULE')?.trim() || '0 3 * * *',
    webhookAllowPrivateAddresses: v.bool('WEBHOOK_ALLOW_PRIVATE_ADDRESSES', false),
    webhookRetryBaseSeconds: v.int('WEBHOOK_RETRY_BASE_SECONDS', 30, { max: 6 * 3600 }),
    webhookMaxAttempts: v.int('WEBHOOK_MAX_ATTEMPTS', 20, { min: 1, max: 100 }),
  };
  config.s3 = s3Config(v);
  const rootKey = v.string('STORAGE_ROOT_ACCESS_KEY');
  const rootSecret = v.string('STORAGE_ROOT_SECRET_KEY');
  if (rootKey && rootSecret) config.storageRoot = { accessKeyId: rootKey, secretAccessKey: rootSecret };
  else if (rootKey || rootSecret) v.problems.push('STORAGE_ROOT_ACCESS_KEY and STORAGE_ROOT_SECRET_KEY go together (set both, or neither to generate them)');
  if (rootKey && /^ASIA/.test(rootKey)) v.problems.push('STORAGE_ROOT_ACCESS_KEY must not start with ASIA (the prefix of temporary keys)');
  if (config.s3) {
    config.storageBucket = config.s3.bucket;
    config.storageRegion = config.s3.region;
  }
  if (config.httpRequestTimeoutSeconds > 0 && config.httpHeadersTimeoutSeconds > config.httpRequestTimeoutSeconds) {
    v.problems.push(`HTTP_HEADERS_TIMEOUT_SECONDS must not exceed HTTP_REQUEST_TIMEOUT_SECONDS (${config.httpHeadersTimeoutSeconds} > ${config.httpRequestTimeoutSeconds})`);
  }
  if (config.shareTokenTtlSeconds > config.shareTokenMaxTtlSeconds) {
    v.problems.push(`SHARE_TOKEN_TTL_SECONDS must not exceed SHARE_TOKEN_MAX_TTL_SECONDS (${config.shareTokenTtlSeconds} > ${config.shareTokenMaxTtlSeconds})`);
  }
  // pg-boss reads five-field cron (minute hour day month weekday); a bad one would stop the start later, unnamed.
  if (!/^\S+( \S+){4}$/.test(config.retentionSchedule)) {
    v.problems.push(`RETENTION_SCHEDULE must be a cron expression of five fields (minute hour day month weekday, UTC), got "${config.retentionSchedule}"`);
  }
  if (v.problems.length) {
    throw new ConfigError(`Invalid configuration (environment variables; see the README's configuration table):\n${v.problems.map((p) => `  ${p}`).join('\n')}`);
  }
  return config;
}

/**
 * What `worker` needs beyond loadConfig's checks: it serves no cloud API of its own, so without
 * CLOUD_URL its inspection jobs would call a server that is not there and be retried forever
 * (an inspection stuck in status 3). Refused at start, as a bad variable is.
 */
export function checkWorkerConfig(config: Pick<Config, 'cloudUrl'>): void {
  if (!config.cloudUrl) {
    throw new ConfigError(
      'Invalid configuration (environment variables; see the README\'s configuration table):\n' +
        '  CLOUD_URL must be set for `worker`: the URL where the cloud service\'s API answers (e.g. http://api.internal:8001), since a worker serves none itself',
    );
  }
}

/** The S3_* variables: all or nothing, keyed on S3_BUCKET. */
function s3Config(v: EnvReader): S3Config | undefined {
  const bucket = v.string('S3_BUCKET');
  const http = ['http:', 'https:'];
  const endpoint = v.url('S3_ENDPOINT', http);
  if (!bucket) {
    for (const name of ['S3_ENDPOINT', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_ROLE_ARN', 'S3_STS_ENDPOINT', 'S3_ROLE_MODE', 'S3_USER_ARN', 'S3_IAM_ENDPOINT']) {
      if (v.string(name)) v.problems.push(`${name} is set but S3_BUCKET is not: set S3_BUCKET to use an S3 store, or unset the S3_* variables for the embedded one`);
    }
    return undefined;
  }
  const accessKeyId = v.string('S3_ACCESS_KEY_ID');
  const secretAccessKey = v.string('S3_SECRET_ACCESS_KEY');
  if (!accessKeyId || !secretAccessKey) v.problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are needed with S3_BUCKET (the credentials that may call STS AssumeRole)');
  const stsEndpoint = v.url('S3_STS_ENDPOINT', http) ?? endpoint;
  const roleMode = v.oneOf('S3_ROLE_MODE', ['shared', 'per-prefix'] as const, 'shared');
  const userArn = v.string('S3_USER_ARN')?.trim();
  if (userArn !== undefined && !/^arn:[\w-]+:iam::[^:]*:user\/\S+$/.test(userArn)) v.problems.push(`S3_USER_ARN must be a user's ARN such as arn:aws:iam::123456789012:user/uploads (Ceph RGW: arn:aws:iam:::user/uploads), got "${userArn}"`);
  if (roleMode === 'per-prefix' && !userArn) v.problems.push("S3_USER_ARN is needed with S3_ROLE_MODE=per-prefix: the ARN of S3_ACCESS_KEY_ID's user, the only principal the per-prefix roles trust");
  return {
    endpoint,
    region: v.string('S3_REGION') ?? 'us-east-1',
    bucket,
    accessKeyId: accessKeyId ?? '',
    secretAccessKey: secretAccessKey ?? '',
    forcePathStyle: v.bool('S3_FORCE_PATH_STYLE', endpoint !== undefined),
    stsEndpoint,
    roleArn: v.string('S3_ROLE_ARN'),
    publicEndpoint: v.url('S3_PUBLIC_ENDPOINT', http) ?? endpoint,
    roleMode,
    userArn,
    iamEndpoint: v.url('S3_IAM_ENDPOINT', http) ?? stsEndpoint ?? 'https://iam.amazonaws.com',
    unsafeRoleOk: v.bool('S3_UNSAFE_ROLE_OK', false),
  };
}
