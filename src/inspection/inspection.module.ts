// Wires the inspection service: its services over its own schema, its client of the cloud
// service (HTTP only), its job handlers and its HTTP server. Nothing here reads the cloud's tables.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../infra/database/database.ts';
import { migrateSchema } from '../infra/database/migrate.ts';
import type { JobHandlers, JobQueue } from '../infra/jobs/job-queue.ts';
import { createHttpServer, type HttpServer } from '../infra/http/http-server.ts';
import { inspectionMigrations } from './inspection.migrations.ts';
import type { InspectionTables } from './inspection.tables.ts';
import type { InspectionJobs } from './inspection.jobs.ts';
import { AuthService } from './auth/auth.service.ts';
import { CloudClient } from './cloud-client/cloud-client.ts';
import { AssetService } from './assets/asset.service.ts';
import { AllowanceService } from './allowance/allowance.service.ts';
import { InspectionService } from './inspections/inspection.service.ts';
import { InspectionPipeline } from './pipeline/inspection-pipeline.ts';
import { registerInspectionRoutes } from './inspection.routes.ts';
import { AccountAdmin } from './auth/account-admin.ts';

export interface InspectionModuleOptions {
  database: Database;
  jobs: JobQueue;
  logger: Logger;
  tokenSigningKey: Uint8Array;
  tokenTtlSeconds: number;
  cloudUrl: () => string;
  cloudClientId: string;
  cloudClientSecret: string;
}

export class InspectionModule {
  readonly db: Kysely<InspectionTables>;
  readonly auth: AuthService;
  readonly cloud: CloudClient;
  readonly assets: AssetService;
  readonly allowance: AllowanceService;
  readonly inspections: InspectionService;
  readonly pipeline: InspectionPipeline;
  readonly accounts: AccountAdmin;

  constructor(private readonly options: InspectionModuleOptions) {
    this.db = options.database.db as Kysely<InspectionTables>;
    const logger = options.logger.child({ service: 'inspection' });
    this.auth = new AuthService(this.db, options.tokenSigningKey, options.tokenTtlSeconds);
    this.cloud = new CloudClient({
      baseUrl: options.cloudUrl,
      clientId: options.cloudClientId,
      clientSecret: options.cloudClientSecret,
      userAgent: 'inspection-service/0.1',
    });
    this.assets = new AssetService(this.db, this.cloud);
    this.allowance = new AllowanceService(this.db);
    this.inspections = new InspectionService(this.db, this.cloud, this.assets, this.allowance, options.jobs);
    this.pipeline = new InspectionPipeline(this.db, this.cloud, options.jobs, logger);
    this.accounts = new AccountAdmin(this.db);
    const handlers: JobHandlers<InspectionJobs> = {
      'inspection.analyze-images': { handler: ({ inspectionId }) => this.pipeline.analyzeImages(inspectionId), concurrency: 2 },
      'inspection.track-photogrammetry': { handler: ({ inspectionId }) => this.pipeline.trackPhotogrammetry(inspectionId), concurrency: 4 },
    };
    options.jobs.register(handlers);
  }

  migrate(): Promise<void> {
    return migrateSchema(this.options.database.db, 'inspection', inspectionMigrations);
  }

  async createServer(): Promise<HttpServer> {
    const app = await createHttpServer({
      logger: this.options.logger.child({ service: 'inspection' }),
      title: 'Inspection service',
      description: 'Assets, inspections, processing, cameras, allowance. See shared/spec/inspection-service.md.',
      version: '1',
      openapiPath: '/v1/openapi.json',
    });
    await registerInspectionRoutes(app, { auth: this.auth, assets: this.assets, inspections: this.inspections, allowance: this.allowance });
    return app;
  }
}
