// The composition root: builds the infrastructure (database, object storage, job queue) and the
// two services from a Config, and starts what the chosen role needs:
//   serve  - HTTP servers of both services, the embedded S3 endpoint and (by default) the workers;
//   worker - the job workers only, against the same database and storage.
// Tests build as many systems as they like, each on its own data folder and ephemeral ports.
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './infra/database/database.ts';
import { JobQueue } from './infra/jobs/job-queue.ts';
import { prepareDataDir, secureDataDir } from './infra/data-dir.ts';
import { readOrCreateKey } from './infra/auth/key-files.ts';
import { ServerSecretRepository } from './infra/secrets/server-secrets.ts';
import { startEmbeddedS3, type EmbeddedS3 } from './infra/storage/embedded-s3.ts';
import { withLoopbackAliases } from './infra/storage/s3-cors.ts';
import { storageConnectionCaps } from './infra/http/connection-limits.ts';
import { EmbeddedCredentialIssuer } from './infra/storage/embedded-credentials.ts';
import { RevokedCredentials } from './infra/storage/revoked-credentials.ts';
import { LocalDiskObjectStore } from './infra/storage/local-disk-store.ts';
import { S3UrlPresigner } from './infra/storage/s3-presigner.ts';
import type { CredentialIssuer, ObjectStore } from './infra/storage/object-store.ts';
import type { HttpServer } from './infra/http/http-server.ts';
import { edgeOptionsFrom } from './infra/http/http-edge.ts';
import { createMailer } from './infra/mail/mailer.ts';
import { DEFAULT_RETRY_POLICY } from './infra/webhooks/signing.ts';
import { CloudModule } from './cloud/cloud.module.ts';
import { engineSettingsFrom } from './cloud/processing/engines.ts';
import { InspectionModule } from './inspection/inspection.module.ts';
import { bootstrapDemo, ensureConsoleApiKey, ensureInspectionCloudClient } from './admin/bootstrap.ts';

export type Role = 'serve' | 'worker' | 'admin';

export interface System {
  config: Config;
  logger: Logger;
  database: Database;
  jobs: JobQueue;
  store: ObjectStore;
  cloud: CloudModule;
  inspection: InspectionModule;
  urls: { inspection: string; cloud: string; storage: string };
  stop(): Promise<void>;
}

export async function startSystem(config: Config, role: Role, logger: Logger = createLogger(config)): Promise<System> {
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((err) => logger.error({ err }, 'error while stopping'));
    }
  };
  try {
    prepareDataDir(config.dataDir); // 0700 before anything is written into it (data-dir.ts)
    const database = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, logger: logger.child({ service: 'database' }) });
    cleanups.push(() => database.close());

    const urls = {
      inspection: config.inspectionPublicUrl ?? `http://${config.host}:${config.inspectionPort}`,
      cloud: config.cloudPublicUrl ?? `http://${config.host}:${config.cloudPort}`,
      storage: config.storagePublicUrl ?? `http://${config.host}:${config.storagePort}`,
    };

    // Schemas first: the services' secrets (signing keys, the cloud client) live in them, so every
    // process of a deployment shares them without sharing a disk (server-secrets.ts).
    await CloudModule.migrate(database.db);
    await InspectionModule.migrate(database.db);
    const cloudSecrets = new ServerSecretRepository(database.db as never, 'cloud', config.dataDir);
    const inspectionSecrets = new ServerSecretRepository(database.db as never, 'inspection', config.dataDir);

    // Object storage: an S3 store, or the embedded store (with its S3 endpoint when serving), whose
    // processes share DATA_DIR (objects and the master key of its credentials).
    const storageRoot = path.join(config.dataDir, 'objects');
    let store: ObjectStore;
    let issuer: CredentialIssuer;
    // Temporary storage credentials work only while their cloud project exists (known once the
    // cloud module is built below; a request before that answers 503 and the client retries).
    // eslint-disable-next-line prefer-const -- set once the cloud module exists, read by the endpoint's closure before
    let prefixOwner: ((bucket: string, prefix: string) => Promise<boolean | 'read-only'>) | undefined;
    // Single credentials revoked before they expire (a removed member's, membership-removal.ts) or
    // closed to writes (their inspection's processing started): the inspection service knows
    // which (storage-grants.ts); asked once the module exists (503 before, retried).
    // eslint-disable-next-line prefer-const -- set once the inspection module exists, read by the endpoint's closure before
    let inspectionModule: InspectionModule | undefined;
    const revokedCredentials = new RevokedCredentials((accessKey) => (inspectionModule ? inspectionModule.storageGrants.stateOf(accessKey) : Promise.reject(new Error('the inspection service is starting'))));
    if (config.s3) {
      // An external S3 store: objects and temporary credentials come from it (STS AssumeRole);
      // nothing is kept on local disk and no embedded endpoint runs (docs: README, deployment).
      // `serve` issues the clients' credentials: it first checks that they cannot leave their prefix
      // (s3-role-self-check.ts), and refuses to start otherwise.
      const s3 = config.s3;
      // Loaded here only: the AWS SDK's S3 and STS clients hold ~40 MB that the embedded store never uses.
      const { openExternalStore } = await import('./infra/storage/external-store.ts');
      ({ store, issuer } = await openExternalStore(s3, { credentialsTtlSeconds: config.storageCredentialsTtl, selfCheck: role === 'serve', logger }));
      urls.storage = s3.publicEndpoint ?? `https://s3.${s3.region}.amazonaws.com`;
    } else if (role === 'serve') {
      const masterKey = readOrCreateKey(config.dataDir, 'storage-master.key');
      const s3: EmbeddedS3 = await startEmbeddedS3({
        rootDir: storageRoot,
        buckets: [config.storageBucket],
        masterKey,
        logger: logger.child({ service: 'storage' }),
        host: config.host,
        port: config.storagePort,
        publicUrl: config.storagePublicUrl,
        region: config.storageRegion,
        isPrefixLive: (bucket, prefix) => (prefixOwner ? prefixOwner(bucket, prefix) : Promise.reject(new Error('the cloud service is starting'))),
        revokedCredentials,
        prefixQuotaBytes: config.storagePrefixQuotaBytes,
        maxOpenUploadsPerPrefix: config.storagePrefixMaxMultipartUploads,
        // Caps and a short headers timeout: idle connections cannot take the descriptors the API servers need (connection-limits.ts).
        connections: storageConnectionCaps(config),
        headersTimeoutMs: config.storageHeadersTimeoutSeconds * 1000,
        multipartExpiryMs: config.storageMultipartExpirySeconds ? config.storageMultipartExpirySeconds * 1000 : Infinity, // 0: never
        // The web console (served by the inspection service) uploads from the browser. Asked per
        // request: the inspection service's port is known only once it listens (0 in tests).
        corsOrigins: () => [...withLoopbackAliases(urls.inspection), ...config.consoleOrigins],
      });
      cleanups.push(() => s3.close());
      urls.storage = s3.url;
      store = s3.store;
      issuer = s3.issuer;
    } else {
      const endpoint = () => urls.storage;
      const masterKey = readOrCreateKey(config.dataDir, 'storage-master.key');
      issuer = new EmbeddedCredentialIssuer({ masterKey, region: config.storageRegion, endpoint });
      const presigner = new S3UrlPresigner({ endpoint, region: config.storageRegion, credentials: (issuer as EmbeddedCredentialIssuer).rootCredentials() });
      store = new LocalDiskObjectStore({ rootDir: storageRoot, buckets: [config.storageBucket], presigner });
    }

    const jobs = new JobQueue(database, { heartbeatSeconds: config.jobHeartbeatSeconds, logger: logger.child({ service: 'jobs' }) });
    cleanups.push(() => jobs.stop());

    // One mailer for both services' e-mails (SMTP_URL, else the outbox DATA_DIR/mail).
    const mailer = createMailer({ smtpUrl: config.smtpUrl, outboxDir: path.join(config.dataDir, 'mail'), from: config.mailFrom, logger: logger.child({ service: 'mail' }) });
    cleanups.push(async () => mailer.close());
    const cloud = new CloudModule({
      database,
      store,
      issuer,
      jobs,
      logger,
      privateKey: await cloudSecrets.rsaKey('cloud-jwt-rsa.pem'),
      issuerUrl: config.cloudIssuer,
      tokenTtlSeconds: config.cloudTokenTtl,
      bucket: config.storageBucket,
      region: config.storageRegion,
      credentialsTtlSeconds: config.storageCredentialsTtl,
      engine: config.engine,
      engines: config.engines,
      engineSimulatedSeconds: config.engineSimulatedSeconds,
      engineSettings: engineSettingsFrom(config),
      publicUrl: () => urls.cloud,
      mailer,
      webhooks: {
        secretKey: await cloudSecrets.key('webhook-secrets.key'),
        allowPrivate: config.webhookAllowPrivateAddresses,
        retry: { ...DEFAULT_RETRY_POLICY, baseSeconds: config.webhookRetryBaseSeconds, maxAttempts: config.webhookMaxAttempts },
      },
    });
    prefixOwner = (bucket, prefix) => cloud.isStoragePrefixLive(bucket, prefix);

    const cloudClient =
      config.cloudClientId && config.cloudClientSecret
        ? { clientId: config.cloudClientId, clientSecret: config.cloudClientSecret }
        : await ensureInspectionCloudClient(inspectionSecrets, cloud);
    // The inspection service's client acts for each inspection's organization (issue 30): also one
    // given by CLOUD_CLIENT_ID, or made before (a client unknown to this database changes nothing).
    await cloud.oauth.markServiceClient(cloudClient.clientId);
    const inspection = new InspectionModule({
      database,
      jobs,
      logger,
      store,
      bucket: config.storageBucket,
      mailer,
      tokenSigningKey: await inspectionSecrets.key('inspection-jwt.key'),
      tokenTtlSeconds: config.inspectionTokenTtl,
      cloudUrl: () => config.cloudUrl ?? urls.cloud,
      cloudClientId: cloudClient.clientId,
      cloudClientSecret: cloudClient.clientSecret,
      processingBackendEngines: config.processingBackendEngines,
      publicUrl: () => urls.inspection,
      shareTokens: { ttlSeconds: config.shareTokenTtlSeconds, maxTtlSeconds: config.shareTokenMaxTtlSeconds, urlSeconds: config.shareTokenUrlTtlSeconds },
      video: { ffmpegBinary: config.ffmpegBinary, ffprobeBinary: config.ffprobeBinary, workDir: config.engineWorkDir ?? path.join(config.dataDir, 'work') },
      recordCaps: { measurementsPerInspection: config.inspectionMaxMeasurements, annotationsPerInspection: config.inspectionMaxAnnotations },
      storageQuotaBytes: config.storageOrganizationQuotaBytes,
      imageLimits: { maxBytes: config.imageMaxBytes, maxPixels: config.imageMaxPixels },
      retention: { defaultDays: config.retentionDays, schedule: config.retentionSchedule },
      webhooks: {
        secretKey: await inspectionSecrets.key('webhook-secrets.key'),
        allowPrivate: config.webhookAllowPrivateAddresses,
        retry: { ...DEFAULT_RETRY_POLICY, baseSeconds: config.webhookRetryBaseSeconds, maxAttempts: config.webhookMaxAttempts },
      },
      storageRevocation: {
        revoked: (accessKeys) => revokedCredentials.revoked(accessKeys),
        revokeIssuedBefore: async (prefix, before) => issuer.revokeIssuedBefore?.(config.storageBucket, prefix, before),
      },
    });
    inspectionModule = inspection;

    if (role === 'serve' && config.bootstrapDemo) await bootstrapDemo(config.dataDir, { cloud, inspection, logger });

    if (role !== 'admin') {
      await jobs.start(role === 'worker' || config.runWorkers);
    }

    if (role === 'serve') {
      const edge = edgeOptionsFrom(config);
      const cloudServer = await cloud.createServer(edge);
      urls.cloud = await listen(cloudServer, config.host, config.cloudPort, config.cloudPublicUrl);
      cleanups.push(() => cloudServer.close());
      // Before the inspection API answers: inspections made before issue 30 find their cloud
      // projects in their organization. A cloud elsewhere (CLOUD_URL) that is down delays it to a
      // retry every minute, meanwhile those inspections' cloud calls answer 404 or 503.
      cleanups.push(await handOverUntilDone(inspection, logger));
      const webConsole = config.consoleEnabled
        ? { apiKey: await ensureConsoleApiKey(inspectionSecrets, inspection.accounts), storageUrl: urls.storage, basemapUrl: config.consoleBasemapUrl }
        : undefined;
      const inspectionServer = await inspection.createServer({ ...edge, publicUrl: () => urls.inspection }, webConsole);
      urls.inspection = await listen(inspectionServer, config.host, config.inspectionPort, config.inspectionPublicUrl);
      cleanups.push(() => inspectionServer.close());
      logger.info({ urls }, 'services ready');
    }
    secureDataDir(config.dataDir, logger); // after the database's own files exist (data-dir.ts)
    return { config, logger, database, jobs, store, cloud, inspection, urls, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The legacy hand-over (inspection/cloud-client/legacy-projects.ts), retried each minute until it succeeds; returns its cleanup. */
async function handOverUntilDone(inspection: InspectionModule, logger: Logger): Promise<() => Promise<void>> {
  let timer: NodeJS.Timeout | undefined;
  const attempt = async (): Promise<void> => {
    try {
      await inspection.handOverLegacyCloudProjects();
      timer = undefined;
    } catch (err) {
      logger.warn({ err }, 'handing earlier cloud projects over to their organizations failed; retrying in a minute');
      timer = setTimeout(() => void attempt(), 60_000).unref();
    }
  };
  await attempt();
  return async () => clearTimeout(timer);
}

async function listen(server: HttpServer, host: string, port: number, publicUrl: string | undefined): Promise<string> {
  await server.listen({ host, port });
  const address = server.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return publicUrl ?? `http://${host}:${actualPort}`;
}

/** `destination`: where lines go (default stdout; tests read them). */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    // Secrets never reach the log, even if a future change logs a request or a record by mistake.
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers["x-share-token"]',
        '*.password',
        '*.secret_key',
        '*.session_token',
        '*.client_secret',
        '*.access_token',
        '*.api_token',
      ],
      censor: '[redacted]',
    },
    serializers: {
      // Fastify's request fields, with a share token (inspection auth/share-tokens.ts, cloud
      // projects/share-links.ts) blanked out of the URL: an API read's ?share_token= or
      // ?shareToken=, and the path of a link to the viewer, /share/<token>.
      req: (req: { method?: string; url?: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
        method: req.method,
        url: req.url?.replace(/([?&]share_?token=)[^&#]*/gi, '$1[redacted]').replace(/^(\/+share\/)[^?#]*/i, '$1[redacted]'),
        host: req.host,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
