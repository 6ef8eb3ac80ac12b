// Wires the inspection service: its services over its own schema, its client of the cloud
// service (HTTP only), the object store for its own files and the inputs it reads, its mailer,
// its job handlers and its HTTP server. Nothing here reads the cloud's tables.
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../infra/database/database.ts';
import { migrateSchema } from '../infra/database/migrate.ts';
import type { JobHandlers, JobQueue } from '../infra/jobs/job-queue.ts';
import type { ObjectStore } from '../infra/storage/object-store.ts';
import type { Mailer } from '../infra/mail/mailer.ts';
import { createHttpServer, type HttpServer } from '../infra/http/http-server.ts';
import type { HttpEdgeOptions } from '../infra/http/http-edge.ts';
import { inspectionMigrations } from './inspection.migrations.ts';
import type { InspectionTables } from './inspection.tables.ts';
import type { InspectionJobs } from './inspection.jobs.ts';
import { AuthService } from './auth/auth.service.ts';
import { ShareTokenService, type ShareTokenLifetimes } from './auth/share-tokens.ts';
import { CloudClient, type CloudScope } from './cloud-client/cloud-client.ts';
import { handOverLegacyProjects } from './cloud-client/legacy-projects.ts';
import { OutputAvailability } from './pipeline/output-availability.ts';
import { AssetService } from './assets/asset.service.ts';
import { AllowanceService } from './allowance/allowance.service.ts';
import { InspectionService } from './inspections/inspection.service.ts';
import { InspectionRepository } from './inspections/inspection.repository.ts';
import { InspectionAccess } from './auth/inspection-access.ts';
import { InspectionPipeline } from './pipeline/inspection-pipeline.ts';
import { registerInspectionRoutes } from './inspection.routes.ts';
import { AccountAdmin } from './auth/account-admin.ts';
import { Memberships } from './auth/membership-removal.ts';
import { StorageGrants, type StorageRevocation } from './auth/storage-grants.ts';
import { NotificationService } from './notifications/notification.service.ts';
import { DeletionService } from './deletion/deletion.service.ts';
import { RetryService } from './retries/retry.service.ts';
import { AnnotationService } from './annotations/annotation.service.ts';
import { PointCloudLocator } from './annotations/coords-3d.ts';
import { StoredPointClouds } from './storage/point-clouds.ts';
import { MeasurementService } from './measurements/measurement.service.ts';
import { ExtrasService } from './extras/extras.service.ts';
import { OutputService } from './outputs/output.service.ts';
import { InventoryService } from './inventory/inventory.service.ts';
import { InputsZipService } from './inputs/inputs-zip.service.ts';
import { ReportService } from './reports/report.service.ts';
import type { FileStore } from './storage/inspection-files.ts';
import { ProcessingStatusService } from './processing-status/processing-status.service.ts';
import { PreviewService } from './previews/preview.service.ts';
import { OrthoService } from './ortho/ortho.service.ts';
import { RustAnalysis } from './rust/rust-analysis.ts';
import { AntennaDetection } from './inventory/antenna-detection.ts';
import { ImageReader } from '../shared/images/image-reader.ts';
import { DEFAULT_IMAGE_LIMITS, type ImageLimits } from '../shared/images/image-limits.ts';
import { consoleCspDirectives, registerConsole, type ConsoleOptions } from './console/console.routes.ts';
import { VideoFrameExtractor, type VideoToolsOptions } from './video/video-extraction.ts';
import { DEFAULT_RECORD_CAPS, type RecordCaps } from './limits/record-caps.ts';
import { StorageQuota } from './limits/storage-quota.ts';
import { RetentionService } from './retention/retention.service.ts';
import { WebhookService, type WebhookOptions } from './webhooks/webhook.service.ts';
import { SecretBox, DEFAULT_RETRY_POLICY } from '../infra/webhooks/signing.ts';
import { DEFAULT_TIMEOUT_MS } from '../infra/webhooks/outbound.ts';
import { DELIVERIES_PER_TENANT, DELIVERY_WORKERS } from '../infra/webhooks/webhook-core.ts';

export interface InspectionModuleOptions {
  database: Database;
  jobs: JobQueue;
  logger: Logger;
  /** The shared object store: inputs are read from it, the service's own files written to it. */
  store: ObjectStore;
  /** Bucket of the service's own files (inputs ZIPs, reports). */
  bucket: string;
  mailer: Mailer;
  tokenSigningKey: Uint8Array;
  tokenTtlSeconds: number;
  cloudUrl: () => string;
  cloudClientId: string;
  cloudClientSecret: string;
  /** processing_backend -> the cloud engine its processing asks for (config PROCESSING_BACKEND_ENGINES). */
  processingBackendEngines?: Record<string, string>;
  /** The service's public base URL, for share links (reports are built by workers, which do not listen). */
  publicUrl?: () => string | undefined;
  /** Lifetimes of share tokens and of the URLs handed to their holders (SHARE_TOKEN_*; default DEFAULT_SHARE_TOKEN_LIFETIMES). */
  shareTokens?: ShareTokenLifetimes;
  /** Measurements and annotations per inspection (INSPECTION_MAX_*; default DEFAULT_RECORD_CAPS). */
  recordCaps?: RecordCaps;
  /** Bytes each account (organization, or user without one) may store (STORAGE_ORGANIZATION_QUOTA_BYTES; default none). */
  storageQuotaBytes?: number;
  /** is_video inspections: ffmpeg, ffprobe and the work folder of frame extraction (default: on the PATH, the OS temp folder). */
  video?: VideoToolsOptions;
  /** Largest photo file read and photo decoded (IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS; default DEFAULT_IMAGE_LIMITS). */
  imageLimits?: ImageLimits;
  /** Retention (RETENTION_DAYS, RETENTION_SCHEDULE; default 365 days, daily at 03:00 UTC): retention/retention.service.ts. */
  retention?: { defaultDays: number; schedule: string };
  /** The key sealing webhook secrets (32 bytes, a server secret) and delivery settings (WEBHOOK_*; default: no private addresses, DEFAULT_RETRY_POLICY). */
  webhooks: { secretKey: Uint8Array } & Partial<WebhookOptions>;
  /** What the object store can end of a removed member's credentials (auth/storage-grants.ts). */
  storageRevocation?: StorageRevocation;
}

export const DEFAULT_RETENTION = { defaultDays: 365, schedule: '0 3 * * *' } as const;

export interface ServerErrorRecord {
  method: string;
  url: string;
  statusCode: number;
}

export class InspectionModule {
  readonly db: Kysely<InspectionTables>;
  readonly auth: AuthService;
  readonly shareTokens: ShareTokenService;
  /** The only writer of `inspection.inspections`. */
  readonly inspectionRows: InspectionRepository;
  /** Access checks of inspections and assets, for every service. */
  readonly access: InspectionAccess;
  readonly cloud: CloudClient;
  /** The outputs the cloud's engine cannot make, for the console (pipeline/output-availability.ts). */
  readonly outputAvailability: OutputAvailability;
  readonly assets: AssetService;
  readonly allowance: AllowanceService;
  readonly inspections: InspectionService;
  readonly pipeline: InspectionPipeline;
  readonly videoFrames: VideoFrameExtractor;
  readonly accounts: AccountAdmin;
  /** Members of organizations and their removal (auth/membership-removal.ts). */
  readonly memberships: Memberships;
  /** Storage credentials handed to members, revocable (auth/storage-grants.ts). */
  readonly storageGrants: StorageGrants;
  readonly notifications: NotificationService;
  readonly deletion: DeletionService;
  readonly retries: RetryService;
  readonly annotations: AnnotationService;
  readonly measurements: MeasurementService;
  readonly extras: ExtrasService;
  readonly outputs: OutputService;
  readonly inventory: InventoryService;
  readonly inputs: InputsZipService;
  readonly reports: ReportService;
  readonly processingStatus: ProcessingStatusService;
  readonly previews: PreviewService;
  readonly ortho: OrthoService;
  readonly rust: RustAnalysis;
  /** The automatic antenna detection (`detect_antennas`) after processing. */
  readonly antennaDetection: AntennaDetection;
  /** Retention: the daily sweep and the purge of an inspection's data. */
  readonly retention: RetentionService;
  /** Webhook subscriptions and deliveries. */
  readonly webhooks: WebhookService;
  /** Photos read for decoding (previews, rust analysis, report crops) under the image limits, refusals remembered. */
  readonly images: ImageReader;
  /** 5xx answers of the HTTP server (the last 100): none should ever be caused by a client. */
  readonly serverErrors: ServerErrorRecord[] = [];

  /** Moves the cloud records made for organizations before issue 30 into them (cloud-client/legacy-projects.ts). */
  handOverLegacyCloudProjects(): Promise<{ moved: number }> {
    return handOverLegacyProjects(this.db, this.cloud, this.options.logger.child({ service: 'inspection' }));
  }

  /** The cloud API acting for an inspection's organization (tests and benchmarks read its project through it). */
  async cloudFor(inspectionId: number): Promise<CloudScope> {
    return this.cloud.as(await this.inspectionRows.findAny(inspectionId));
  }

  constructor(private readonly options: InspectionModuleOptions) {
    this.db = options.database.db as Kysely<InspectionTables>;
    const logger = options.logger.child({ service: 'inspection' });
    const jobs = options.jobs;
    const files: FileStore = { store: options.store, bucket: options.bucket };
    const images = (this.images = new ImageReader(options.store, options.imageLimits ?? DEFAULT_IMAGE_LIMITS));
    this.cloud = new CloudClient({
      baseUrl: options.cloudUrl,
      clientId: options.cloudClientId,
      clientSecret: options.cloudClientSecret,
      userAgent: 'inspection-service/0.1',
      // The cloud organization of an inspection's organization has its uuid (issue 30).
      organizationUuid: async (id) => (await this.db.selectFrom('inspection.organizations').select('uuid').where('id', '=', id).executeTakeFirstOrThrow()).uuid,
    });
    // The capabilities are the cloud's, the same for every organization: read in the service's own.
    this.outputAvailability = new OutputAvailability(() => this.cloud.as({ organization_id: null }).capabilities(), options.processingBackendEngines ?? {}, logger);
    // Layers: routes -> services -> the repository (SQL of the inspections table) and access checks.
    const rows = (this.inspectionRows = new InspectionRepository(this.db));
    const access = (this.access = new InspectionAccess(this.db, rows));
    const { secretKey, ...webhookOptions } = options.webhooks;
    this.webhooks = new WebhookService(this.db, jobs, new SecretBox(secretKey), { allowPrivate: false, retry: DEFAULT_RETRY_POLICY, timeoutMs: DEFAULT_TIMEOUT_MS, ...webhookOptions }, logger.child({ part: 'webhooks' }));
    // Every change of a status, report or inputs ZIP queues its webhook events in its transaction.
    rows.onChange(this.webhooks.inspectionChanged);
    this.shareTokens = new ShareTokenService(this.db, access, options.publicUrl ?? (() => undefined), options.shareTokens);
    this.auth = new AuthService(this.db, options.tokenSigningKey, options.tokenTtlSeconds, this.shareTokens);
    this.notifications = new NotificationService(jobs);
    this.assets = new AssetService(this.db, access, this.cloud);
    this.allowance = new AllowanceService(this.db);
    this.pipeline = new InspectionPipeline(this.db, rows, this.cloud, jobs, files, logger, options.processingBackendEngines);
    this.videoFrames = new VideoFrameExtractor(this.db, rows, this.cloud, jobs, files, logger, options.video ?? { ffmpegBinary: 'ffmpeg', ffprobeBinary: 'ffprobe', workDir: os.tmpdir() });
    const retention = options.retention ?? DEFAULT_RETENTION;
    this.retention = new RetentionService(rows, this.cloud, jobs, files, logger, { defaultDays: retention.defaultDays });
    this.storageGrants = new StorageGrants(this.db, options.storageRevocation, logger);
    this.inspections = new InspectionService(this.db, rows, access, this.cloud, this.assets, this.allowance, this.pipeline, this.notifications, { reader: images, bucket: options.bucket }, new StorageQuota(this.db, options.storageQuotaBytes ?? 0), this.retention, this.storageGrants);
    this.accounts = new AccountAdmin(this.db, (id) => this.auth.forgetApiKey(id));
    this.memberships = new Memberships(this.db, this.storageGrants, (userId, organization) => this.auth.forgetMembership(userId, organization));
    this.deletion = new DeletionService(this.db, rows, access, this.cloud, jobs, files, logger);
    this.retries = new RetryService(this.db, rows, access, this.pipeline, this.cloud, this.allowance, jobs, options.store, logger);
    const pointClouds = new StoredPointClouds(files); // one cache for coords_3d and measurement volumes
    const locator = new PointCloudLocator(files, pointClouds);
    const caps = options.recordCaps ?? DEFAULT_RECORD_CAPS;
    this.annotations = new AnnotationService(this.db, rows, access, locator, caps);
    this.rust = new RustAnalysis(this.db, rows, this.annotations, this.cloud, images, locator, logger);
    this.measurements = new MeasurementService(this.db, access, pointClouds, rows, caps);
    this.extras = new ExtrasService(this.db, access);
    this.outputs = new OutputService(access, this.cloud, files);
    this.processingStatus = new ProcessingStatusService(access, this.cloud, files);
    this.previews = new PreviewService(this.db, access, files, images);
    this.ortho = new OrthoService(access, options.store, logger);
    this.inventory = new InventoryService(this.db, access, rows);
    this.antennaDetection = new AntennaDetection(this.db, rows, this.inventory, this.cloud, files, logger);
    this.inputs = new InputsZipService(this.db, rows, access, this.cloud, files, jobs, this.notifications, logger);
    this.reports = new ReportService(this.db, rows, access, this.annotations, this.measurements, this.extras, this.cloud, files, jobs, logger, this.shareTokens, images);
    const handlers: JobHandlers<InspectionJobs> = {
      // One at a time: ffmpeg decodes the whole video, CPU-bound; hours for the longest (ffmpeg's own limit is shorter).
      'inspection.extract-video': { handler: ({ inspectionId }) => this.videoFrames.extract(inspectionId), concurrency: 1, expireInSeconds: 6 * 3600 },
      'inspection.analyze-images': { handler: ({ inspectionId }) => this.pipeline.analyzeImages(inspectionId), concurrency: 2 },
      'inspection.track-photogrammetry': { handler: ({ inspectionId }) => this.pipeline.trackPhotogrammetry(inspectionId), concurrency: 4 },
      'inspection.clip-point-cloud': { handler: ({ inspectionId }) => this.pipeline.clipPointCloud(inspectionId), concurrency: 1 },
      'inspection.detect-rust': { handler: ({ inspectionId }) => this.rust.run(inspectionId), concurrency: 1 },
      // One at a time: a dense cloud is read whole and searched on a worker thread (detection-runner.ts).
      'inspection.detect-antennas': { handler: ({ inspectionId }, attempt) => this.antennaDetection.run(inspectionId, attempt), concurrency: 1 },
      'inspection.prepare-retry': { handler: ({ inspectionId }) => this.retries.prepare(inspectionId), concurrency: 2 },
      'inspection.build-inputs-zip': { handler: ({ inspectionId }) => this.inputs.build(inspectionId), concurrency: 1, expireInSeconds: 6 * 3600 },
      'inspection.build-report': { handler: ({ inspectionId, requestedBy, locale }) => this.reports.build(inspectionId, requestedBy, locale), concurrency: 1 },
      'inspection.send-email': { handler: (message) => options.mailer.send(message), concurrency: 2, retryLimit: 10, retryDelaySeconds: 30 },
      'inspection.delete-resources': { handler: (payload) => this.deletion.deleteResources(payload), concurrency: 2 },
      'inspection.retention-sweep': { handler: async ({ now }) => void (await this.retention.sweep(now ? new Date(now) : new Date())), concurrency: 1 },
      'inspection.purge-data': { handler: ({ inspectionId }) => this.retention.purge(inspectionId), concurrency: 2 },
      'inspection.deliver-webhook': { handler: ({ messageId }) => this.webhooks.deliver(messageId), concurrency: DELIVERY_WORKERS, groupConcurrency: DELIVERIES_PER_TENANT },
    };
    jobs.register(handlers);
    jobs.schedule<InspectionJobs, 'inspection.retention-sweep'>('inspection.retention-sweep', retention.schedule, {});
  }

  /** Brings schema `inspection` up to date; before the module is built, which needs its secrets from it. */
  static migrate(db: Database['db']): Promise<void> {
    return migrateSchema(db as never, 'inspection', inspectionMigrations);
  }

  /** The HTTP server; with `webConsole`, the web console at `/` too (console/console.routes.ts). */
  async createServer(edge: HttpEdgeOptions = {}, webConsole?: ConsoleOptions): Promise<HttpServer> {
    const app = await createHttpServer({
      contentSecurityPolicy: webConsole ? consoleCspDirectives(webConsole) : undefined,
      logger: this.options.logger.child({ service: 'inspection' }),
      edge,
      apiPrefixes: ['/v1/'],
      loginRoute: {
        url: '/v1/auth/token/',
        account: (request) => (request.body as { username?: string } | undefined)?.username || undefined,
        // An API key of one of the user's organizations vouches for the attempt (login-throttle.ts).
        vouch: (request, username) => this.auth.loginVoucher(request.headers, username),
      },
      title: 'Inspection service',
      description:
        'Assets, inspections, processing, cameras, annotations, measurements, reports, retries, allowance. See shared/spec/inspection-service.md and CONTRACT.md section 2. Lists answer a plain array, or the envelope {count, next, previous, results} when `page` and/or `page_size` (at most 1000) are given.',
      version: '1',
      openapiPath: '/v1/openapi.json',
    });
    // A callback hook: no promise per request (bench/README.md, "API").
    app.addHook('onResponse', (request, reply, done) => {
      if (reply.statusCode >= 500) {
        this.serverErrors.push({ method: request.method, url: request.url, statusCode: reply.statusCode });
        if (this.serverErrors.length > 100) this.serverErrors.shift();
      }
      done();
    });
    await registerInspectionRoutes(app, {
      auth: this.auth,
      assets: this.assets,
      inspections: this.inspections,
      allowance: this.allowance,
      deletion: this.deletion,
      retries: this.retries,
      annotations: this.annotations,
      measurements: this.measurements,
      extras: this.extras,
      outputs: this.outputs,
      inventory: this.inventory,
      inputs: this.inputs,
      reports: this.reports,
      processingStatus: this.processingStatus,
      previews: this.previews,
      ortho: this.ortho,
      shareTokens: this.shareTokens,
      webhooks: this.webhooks,
      memberships: this.memberships,
    });
    if (webConsole) await registerConsole(app, { unavailableOutputs: () => this.outputAvailability.unavailableOptions(), ...webConsole });
    return app;
  }
}
