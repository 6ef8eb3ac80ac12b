// HTTP routes of the inspection service (paths from CONTRACT section 2). The token call is open;
// everything else sits in one scope that authenticates first (X-Api-Key + Bearer token, or a share
// token for the reads auth/share-tokens.ts lists) and is registered per resource from the resource folders. Routes bind the request and call one
// service method.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { HttpServer } from '../infra/http/http-server.ts';
import type { AuthContext, AuthService } from './auth/auth.service.ts';
import type { AssetService } from './assets/asset.service.ts';
import type { InspectionService } from './inspections/inspection.service.ts';
import { accountOf, type AllowanceService } from './allowance/allowance.service.ts';
import type { DeletionService } from './deletion/deletion.service.ts';
import type { RetryService } from './retries/retry.service.ts';
import type { AnnotationService } from './annotations/annotation.service.ts';
import type { MeasurementService } from './measurements/measurement.service.ts';
import type { ExtrasService } from './extras/extras.service.ts';
import type { OutputService } from './outputs/output.service.ts';
import type { InventoryService } from './inventory/inventory.service.ts';
import type { InputsZipService } from './inputs/inputs-zip.service.ts';
import type { ReportService } from './reports/report.service.ts';
import type { ProcessingStatusService } from './processing-status/processing-status.service.ts';
import type { PreviewService } from './previews/preview.service.ts';
import { registerPreviewRoutes } from './previews/preview.routes.ts';
import type { OrthoService } from './ortho/ortho.service.ts';
import { registerOrthoRoutes } from './ortho/ortho.routes.ts';
import { ListOf, respondList } from './http/lists.ts';
import { registerAssetRoutes } from './assets/asset.routes.ts';
import { registerInspectionCrudRoutes } from './inspections/inspection.routes.ts';
import { registerInspectionDataRoutes } from './inspections/inspection-data.routes.ts';
import { registerAnnotationRoutes } from './annotations/annotation.routes.ts';
import { registerInventoryRoutes } from './inventory/inventory.routes.ts';
import { registerMeasurementRoutes } from './measurements/measurement.routes.ts';
import { registerRetryRoutes } from './retries/retry.routes.ts';
import { registerReportRoutes } from './reports/report.routes.ts';
import { registerShareTokenRoutes } from './auth/share-token.routes.ts';
import { registerMembershipRoutes } from './auth/membership.routes.ts';
import type { Memberships } from './auth/membership-removal.ts';
import { registerWebhookRoutes } from './webhooks/webhook.routes.ts';
import type { WebhookService } from './webhooks/webhook.service.ts';
import { SHARE_QUERY_PARAMETER, type ShareTokenService } from './auth/share-tokens.ts';
import * as S from './inspection.schemas.ts';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
}

export interface InspectionRouteDeps {
  auth: AuthService;
  assets: AssetService;
  inspections: InspectionService;
  allowance: AllowanceService;
  deletion: DeletionService;
  retries: RetryService;
  annotations: AnnotationService;
  measurements: MeasurementService;
  extras: ExtrasService;
  outputs: OutputService;
  inventory: InventoryService;
  inputs: InputsZipService;
  reports: ReportService;
  processingStatus: ProcessingStatusService;
  previews: PreviewService;
  ortho: OrthoService;
  shareTokens: ShareTokenService;
  webhooks: WebhookService;
  memberships: Memberships;
}

const errors = S.errorResponses;

export async function registerInspectionRoutes(app: HttpServer, deps: InspectionRouteDeps): Promise<void> {
  app.post(
    '/v1/auth/token/',
    { schema: { tags: ['auth'], headers: S.AuthHeaders, body: S.TokenBody, response: { 200: S.TokenResponse, ...errors } } },
    async (request) => deps.auth.issueToken(request.headers, request.body.username, request.body.password, request.body.scope),
  );

  await app.register(async (plain) => {
    const r = plain.withTypeProvider<TypeBoxTypeProvider>();
    r.decorateRequest('auth', null as unknown as AuthContext);
    // A callback hook: the credentials of a request that repeats a recent one are answered at once,
    // without a promise (AuthService.cached; bench/README.md, "API").
    r.addHook('onRequest', (request, _reply, done) => {
      const shareToken = (request.query as Record<string, unknown> | undefined)?.[SHARE_QUERY_PARAMETER];
      const target = { method: request.method, route: request.routeOptions.url, shareToken };
      let cached: AuthContext | undefined;
      try {
        cached = deps.auth.cached(request.headers, target);
      } catch (err) {
        return done(err as Error);
      }
      if (cached) {
        request.auth = cached;
        return done();
      }
      deps.auth.authenticate(request.headers, target).then((auth) => {
        request.auth = auth;
        done();
      }, done);
    });
    const account = (auth: AuthContext) => accountOf({ organization_id: auth.organization?.id ?? null, user_id: auth.userId });

    r.get(
      '/v1/me/',
      { schema: { tags: ['auth'], summary: 'The signed-in user and their organizations (web console)', headers: S.AuthHeaders, response: { 200: S.Profile, ...errors } } },
      async (request) => deps.auth.profile(request.auth),
    );

    // Allowance
    r.get(
      '/v1/allowance/types/',
      { schema: { tags: ['allowance'], headers: S.AuthHeaders, querystring: S.PageQuery, response: { 200: ListOf(S.AllowanceType), ...errors } } },
      async (request) => respondList(request, request.query, await deps.allowance.types()),
    );
    r.get(
      '/v1/allowance/',
      { schema: { tags: ['allowance'], headers: S.AuthHeaders, querystring: S.PageQuery, response: { 200: ListOf(S.AllowanceBalance), ...errors } } },
      async (request) => respondList(request, request.query, await deps.allowance.balances(account(request.auth))),
    );
    r.get(
      '/v1/allowance/history/',
      { schema: { tags: ['allowance'], headers: S.AuthHeaders, querystring: S.PageQuery, response: { 200: ListOf(S.AllowanceHistoryEntry), ...errors } } },
      async (request) => respondList(request, request.query, await deps.allowance.history(account(request.auth))),
    );

    registerAssetRoutes(r, deps);
    registerInspectionCrudRoutes(r, deps);
    registerInspectionDataRoutes(r, deps);
    registerRetryRoutes(r, deps);
    registerReportRoutes(r, deps);
    registerAnnotationRoutes(r, deps);
    registerInventoryRoutes(r, deps);
    registerMeasurementRoutes(r, deps);
    registerPreviewRoutes(r, deps);
    registerOrthoRoutes(r, deps);
    registerShareTokenRoutes(r, deps);
    registerWebhookRoutes(r, deps);
    registerMembershipRoutes(r, deps);
  });
}
