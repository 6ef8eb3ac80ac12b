// Configuration comes from environment variables only, read once in main and passed down
// (no module reads process.env on its own, so tests can build any number of systems side by side).
// Every variable is listed, with its default, in the README's configuration table.
import path from 'node:path';

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
  /** nodeodm engine: base URL of the NodeODM (or ClusterODM) node, and its optional token. */
  nodeodmUrl: string | undefined;
  nodeodmToken: string | undefined;
  /** nodeodm engine: seconds between two polls of the task's state. */
  nodeodmPollSeconds: number;
  /** nodeodm engine: extra ODM options, a JSON object (e.g. {"pc-quality": "high"}), applied last. */
  nodeodmOptions: string | undefined;
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
}

function int(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return n;
}

function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  return ['1', 'true', 'yes', 'on'].includes(value.toLowerCase());
}

function optional(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** A comma-separated list: trimmed, lower case, without blanks or repeats. */
function list(value: string | undefined): string[] {
  return [...new Set((value ?? '').split(',').map((v) => v.trim().toLowerCase()).filter(Boolean))];
}

/** `mapper=colmap,vortex=nodeodm`: processing_backend -> cloud engine. */
function backendEngines(value: string | undefined): Record<string, string> {
  const map: Record<string, string> = {};
  for (const pair of list(value)) {
    const [backend, engine, extra] = pair.split('=').map((v) => v.trim());
    if (!['mapper', 'vortex'].includes(backend) || !engine || extra !== undefined) {
      throw new Error(`PROCESSING_BACKEND_ENGINES: "${pair}" is not <processing_backend>=<engine> with processing_backend mapper or vortex`);
    }
    map[backend] = engine;
  }
  return map;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: optional(env.DATABASE_URL),
    host: env.HOST || '127.0.0.1',
    inspectionPort: int(env.INSPECTION_PORT, 8000, 'INSPECTION_PORT'),
    cloudPort: int(env.CLOUD_PORT, 8001, 'CLOUD_PORT'),
    storagePort: int(env.STORAGE_PORT, 9000, 'STORAGE_PORT'),
    inspectionPublicUrl: optional(env.INSPECTION_PUBLIC_URL),
    cloudPublicUrl: optional(env.CLOUD_PUBLIC_URL),
    storagePublicUrl: optional(env.STORAGE_PUBLIC_URL),
    cloudUrl: optional(env.CLOUD_URL),
    cloudClientId: optional(env.CLOUD_CLIENT_ID),
    cloudClientSecret: optional(env.CLOUD_CLIENT_SECRET),
    storageBucket: env.STORAGE_BUCKET || 'inspection-data',
    storageRegion: env.STORAGE_REGION || 'us-east-1',
    storageCredentialsTtl: int(env.STORAGE_CREDENTIALS_TTL, 12 * 3600, 'STORAGE_CREDENTIALS_TTL'),
    inspectionTokenTtl: int(env.INSPECTION_TOKEN_TTL, 24 * 3600, 'INSPECTION_TOKEN_TTL'),
    cloudTokenTtl: int(env.CLOUD_TOKEN_TTL, 172800, 'CLOUD_TOKEN_TTL'),
    cloudIssuer: env.CLOUD_ISSUER || 'https://cloud.localhost',
    engine: env.ENGINE || 'exif',
    engines: list(env.ENGINES),
    processingBackendEngines: backendEngines(env.PROCESSING_BACKEND_ENGINES),
    engineSimulatedSeconds: int(env.ENGINE_SIMULATED_SECONDS, 0, 'ENGINE_SIMULATED_SECONDS'),
    engineTimeLimitSeconds: int(env.ENGINE_TIME_LIMIT_SECONDS, 12 * 3600, 'ENGINE_TIME_LIMIT_SECONDS'),
    engineWorkDir: optional(env.ENGINE_WORK_DIR) && path.resolve(env.ENGINE_WORK_DIR!),
    colmapBinary: env.COLMAP_BINARY || 'colmap',
    nodeodmUrl: optional(env.NODEODM_URL),
    nodeodmToken: optional(env.NODEODM_TOKEN),
    nodeodmPollSeconds: int(env.NODEODM_POLL_SECONDS, 5, 'NODEODM_POLL_SECONDS'),
    nodeodmOptions: optional(env.NODEODM_OPTIONS),
    runWorkers: bool(env.RUN_WORKERS, true),
    bootstrapDemo: bool(env.BOOTSTRAP_DEMO, true),
    logLevel: env.LOG_LEVEL || 'info',
    jobHeartbeatSeconds: int(env.JOB_HEARTBEAT_SECONDS, 10, 'JOB_HEARTBEAT_SECONDS'),
    smtpUrl: optional(env.SMTP_URL),
    mailFrom: env.MAIL_FROM || 'Open Inspection <noreply@localhost>',
  };
}
