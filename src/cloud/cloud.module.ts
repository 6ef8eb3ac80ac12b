// Wires the cloud project-processing service: its services over its own schema, its job handlers,
// and its HTTP server. Nothing here reads the inspection service's tables.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../infra/database/database.ts';
import { migrateSchema } from '../infra/database/migrate.ts';
import type { CredentialIssuer, ObjectStore } from '../infra/storage/object-store.ts';
import type { JobQueue, JobHandlers } from '../infra/jobs/job-queue.ts';
import { createHttpServer, type HttpServer } from '../infra/http/http-server.ts';
import type { HttpEdgeOptions } from '../infra/http/http-edge.ts';
import { cloudMigrations } from './cloud.migrations.ts';
import type { CloudTables } from './cloud.tables.ts';
import type { CloudJobs } from './cloud.jobs.ts';
import { CloudWebhookService } from './webhooks/cloud-webhooks.ts';
import { CloudMailService } from './notifications/cloud-mail.ts';
import type { Mailer } from '../infra/mail/mailer.ts';
import { DELIVERIES_PER_TENANT, DELIVERY_WORKERS, type WebhookOptions } from '../infra/webhooks/webhook-core.ts';
import { SecretBox, DEFAULT_RETRY_POLICY } from '../infra/webhooks/signing.ts';
import { DEFAULT_TIMEOUT_MS } from '../infra/webhooks/outbound.ts';
import { OAuthService } from './auth/oauth.service.ts';
import { requestedClientId } from './auth/oauth-errors.ts';
import { ProjectService } from './projects/project.service.ts';
import { ProjectRepository } from './projects/project.repository.ts';
import { ProjectExtrasService } from './projects/project-extras.ts';
import { ShareLinkService } from './projects/share-links.ts';
import { ProjectGroupService } from './project-groups/project-group.service.ts';
import { ProjectProcessor } from './processing/project-processing.ts';
import { InputAnalyzer } from './processing/input-analysis.ts';
import { ControlPointService } from './control-points/control-point.service.ts';
import { BUILD_EXPIRY_SECONDS, InputsBundleService } from './bundles/inputs-bundle.ts';
import { DriveService } from './drive/drive.service.ts';
import { createEngines, type EngineSet, type EngineSettings } from './processing/engines.ts';
import { registerCloudRoutes } from './cloud.routes.ts';

export interface CloudModuleOptions {
  database: Database;
  store: ObjectStore;
  issuer: CredentialIssuer;
  jobs: JobQueue;
  logger: Logger;
  privateKey: crypto.KeyObject;
  issuerUrl: string;
  tokenTtlSeconds: number;
  bucket: string;
  region: string;
  credentialsTtlSeconds: number;
  /** The default engine (ENGINE). */
  engine: string;
  /** Further engines a start_processing request may choose (ENGINES). */
  engines?: string[];
  engineSimulatedSeconds: number;
  /** Settings of the colmap and nodeodm engines (engines.ts). */
  engineSettings?: EngineSettings;
  publicUrl: () => string;
  /** The key sealing webhook secrets (32 bytes, a server secret) and delivery settings (WEBHOOK_*). */
  webhooks: { secretKey: Uint8Array } & Partial<WebhookOptions>;
  /** Sends the processing and webhook e-mails to clients' notification addresses (notifications/cloud-mail.ts). */
  mailer: Mailer;
}

export class CloudModule {
  readonly db: Kysely<CloudTables>;
  readonly oauth: OAuthService;
  readonly projects: ProjectService;
  readonly groups: ProjectGroupService;
  readonly processor: ProjectProcessor;
  readonly controlPoints: ControlPointService;
  readonly bundles: InputsBundleService;
  readonly drive: DriveService;
  readonly engines: EngineSet;
  readonly webhooks: CloudWebhookService;
  readonly extras: ProjectExtrasService;
  readonly shareLinks: ShareLinkService;
  private readonly projectRepository: ProjectRepository;

  constructor(private readonly options: CloudModuleOptions) {
    this.db = options.database.db as Kysely<CloudTables>;
    const logger = options.logger.child({ service: 'cloud' });
    this.oauth = new OAuthService(this.db, { issuer: options.issuerUrl, tokenTtlSeconds: options.tokenTtlSeconds, privateKey: options.privateKey });
    const repository = new ProjectRepository(this.db);
    this.projectRepository = repository;
    const { secretKey, ...webhookOptions } = options.webhooks;
    const mail = new CloudMailService(options.jobs, options.publicUrl);
    this.webhooks = new CloudWebhookService(
      this.db,
      options.jobs,
      new SecretBox(secretKey),
      { allowPrivate: false, retry: DEFAULT_RETRY_POLICY, timeoutMs: DEFAULT_TIMEOUT_MS, ...webhookOptions },
      logger.child({ part: 'webhooks' }),
      mail.webhookDisabled,
    );
    // Every change of a project's public_status queues project.status_changed, and the processing
    // e-mail of a start, completion or failure, in its transaction.
    repository.onStatusChange(async (trx, before, after) => {
      await this.webhooks.projectStatusChanged(trx, before, after);
      await mail.projectStatusChanged(trx, before, after);
    });
    const analyzer = new InputAnalyzer(this.db, options.store);
    this.controlPoints = new ControlPointService(repository, analyzer, { chunkedMarkWrites: options.database.kind === 'pglite' });
    this.bundles = new InputsBundleService(repository, options.store, options.jobs, logger, {
      publicUrl: options.publicUrl,
      urlTtlSeconds: options.credentialsTtlSeconds,
    });
    // Every offered engine is built now: one that cannot be configured stops the start.
    this.engines = createEngines(options.engine, options.engines ?? [], { simulatedSeconds: options.engineSimulatedSeconds, ...options.engineSettings });
    this.extras = new ProjectExtrasService(repository, options.store);
    this.shareLinks = new ShareLinkService(repository, options.publicUrl);
    this.projects = new ProjectService(
      { projects: repository, store: options.store, issuer: options.issuer, jobs: options.jobs, controlPoints: this.controlPoints, bundles: this.bundles, extras: this.extras },
      { bucket: options.bucket, region: options.region, credentialsTtlSeconds: options.credentialsTtlSeconds, publicUrl: options.publicUrl, engines: this.engines },
    );
    this.groups = new ProjectGroupService(this.db);
    this.drive = new DriveService(repository);
    this.processor = new ProjectProcessor(repository, this.controlPoints.points, analyzer, options.store, this.engines, logger);
    const handlers: JobHandlers<CloudJobs> = {
      'cloud.process-project': { handler: ({ projectId }) => this.processor.process(projectId), concurrency: 1, expireInSeconds: 24 * 3600 },
      'cloud.build-inputs-zip': { handler: ({ projectId, outputId }) => this.bundles.build(projectId, outputId), concurrency: 2, expireInSeconds: BUILD_EXPIRY_SECONDS },
      'cloud.deliver-webhook': { handler: ({ messageId }) => this.webhooks.deliver(messageId), concurrency: DELIVERY_WORKERS, groupConcurrency: DELIVERIES_PER_TENANT },
      // A failed sending is logged by the queue and retried; it never touches the project. One at
      // a time, in the order queued: a project that fails at once queues "started" and "failed"
      // a few milliseconds apart, and two workers sent them the wrong way round.
      'cloud.send-email': { handler: (message) => options.mailer.send(message), concurrency: 1, retryLimit: 10, retryDelaySeconds: 30 },
    };
    options.jobs.register(handlers);
  }

  /**
   * Whether the owner of a storage prefix handed out with temporary credentials still exists:
   * the project whose uploads folder it is (`.../project-<id>/`, projectPaths.uploads). Any other
   * prefix is not the cloud's, and is refused.
   */
  async isStoragePrefixLive(bucket: string, prefix: string): Promise<boolean | 'read-only'> {
    const match = /^(.+\/project-(\d{1,10}))\/$/.exec(prefix);
    const id = match ? Number(match[2]) : NaN;
    if (!match || id > 2_147_483_647) return false;
    // 'read-only' once processing has started: uploads are closed (spec rule 4).
    return this.projectRepository.storagePrefixState(id, bucket, match[1]);
  }

  /** Brings schema `cloud` up to date; before the module is built, which needs its secrets from it. */
  static migrate(db: Database['db']): Promise<void> {
    return migrateSchema(db as never, 'cloud', cloudMigrations);
  }

  async createServer(edge: HttpEdgeOptions = {}): Promise<HttpServer> {
    const app = await createHttpServer({
      logger: this.options.logger.child({ service: 'cloud' }),
      edge: { publicUrl: this.options.publicUrl, ...edge },
      apiPrefixes: ['/project/api/', '/common/api/', '/oauth2/'],
      // The client is named by HTTP Basic, else client_id in the body (JSON, form) or the query
      // string, the body winning, as the route reads them.
      loginRoute: {
        url: '/oauth2/token/',
        account: (request) => requestedClientId(request.headers.authorization, { client_id: stringField(request.body, 'client_id') ?? stringField(request.query, 'client_id') }),
      },
      title: 'Cloud project-processing service',
      description:
        'Projects, uploads, processing, inputs bundles, project groups, folders and moves, GCPs, MTPs and marks, output coordinate systems. ' +
        'See shared/spec/cloud-processing-service.md and docs/cloud-service.md for the decisions where the spec is silent.',
      version: '3',
      openapiPath: '/project/api/v3/openapi.json',
    });
    await registerCloudRoutes(app, {
      oauth: this.oauth,
      webhooks: this.webhooks,
      projects: this.projects,
      groups: this.groups,
      controlPoints: this.controlPoints,
      bundles: this.bundles,
      drive: this.drive,
      engines: this.engines,
      extras: this.extras,
      shareLinks: this.shareLinks,
    });
    return app;
  }

  /** Admin: an organization (idempotent on uuid). */
  async ensureOrganization(name: string, uuid: string = crypto.randomUUID()): Promise<{ id: number; uuid: string }> {
    const organization = await this.oauth.ensureOrganization(uuid, name);
    // Made earlier by the inspection service acting for it (issue 30) under a placeholder name: named now.
    await this.db.updateTable('cloud.organizations').set({ name }).where('id', '=', organization.id).where('name', '=', `Organization ${uuid}`).execute();
    return organization;
  }
}

function stringField(source: unknown, name: string): string | undefined {
  const value = source && typeof source === 'object' ? (source as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}
