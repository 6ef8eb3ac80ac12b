// HTTP routes of the inspection service (paths from CONTRACT section 2): bind the request, call
// one service method. Every route but the token call needs X-Api-Key + Bearer token.
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { HttpServer } from '../infra/http/http-server.ts';
import type { AuthContext, AuthService } from './auth/auth.service.ts';
import type { AssetService } from './assets/asset.service.ts';
import type { InspectionService } from './inspections/inspection.service.ts';
import { accountOf, type AllowanceService } from './allowance/allowance.service.ts';
import { mapAsset } from './assets/asset.mapper.ts';
import { ADDITIONAL_STATUSES, STATUSES } from './inspections/statuses.ts';
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
}

const errors = S.errorResponses;

export async function registerInspectionRoutes(app: HttpServer, deps: InspectionRouteDeps): Promise<void> {
  app.post(
    '/v1/auth/token/',
    { schema: { tags: ['auth'], headers: S.AuthHeaders, body: S.TokenBody, response: { 200: S.TokenResponse, ...errors } } },
    async (request) => deps.auth.issueToken(request.headers, request.body.username, request.body.password),
  );

  await app.register(async (plain) => {
    const r = plain.withTypeProvider<TypeBoxTypeProvider>();
    r.decorateRequest('auth', null as unknown as AuthContext);
    r.addHook('onRequest', async (request) => {
      request.auth = await deps.auth.authenticate(request.headers, request.method);
    });
    const account = (auth: AuthContext) => accountOf({ organization_id: auth.organization?.id ?? null, user_id: auth.userId });

    // Allowance
    r.get('/v1/allowance/types/', { schema: { tags: ['allowance'], headers: S.AuthHeaders, response: { 200: Type.Array(S.AllowanceType), ...errors } } }, async () =>
      deps.allowance.types(),
    );
    r.get('/v1/allowance/', { schema: { tags: ['allowance'], headers: S.AuthHeaders, response: { 200: Type.Array(S.AllowanceBalance), ...errors } } }, async (request) =>
      deps.allowance.balances(account(request.auth)),
    );
    r.get('/v1/allowance/history/', { schema: { tags: ['allowance'], headers: S.AuthHeaders, response: { 200: Type.Array(S.AllowanceHistoryEntry), ...errors } } }, async (request) =>
      deps.allowance.history(account(request.auth)),
    );

    // Assets
    r.get('/v1/assets/types/', { schema: { tags: ['assets'], headers: S.AuthHeaders, response: { 200: Type.Array(S.AssetTypeRecord), ...errors } } }, async () =>
      deps.assets.types(),
    );
    r.get('/v1/assets/', { schema: { tags: ['assets'], headers: S.AuthHeaders, querystring: S.SearchQuery, response: { 200: Type.Array(S.Asset), ...errors } } }, async (request) => {
      const rows = await deps.assets.list(request.auth, request.query.search);
      const inspections = await deps.assets.inspectionIds(rows.map((a) => a.id));
      return rows.map((a) => mapAsset(a, inspections.get(a.id) ?? []));
    });
    r.post('/v1/assets/', { schema: { tags: ['assets'], headers: S.AuthHeaders, body: S.AssetBody, response: { 201: S.Asset, ...errors } } }, async (request, reply) => {
      const asset = await deps.assets.create(request.auth, request.body);
      reply.status(201);
      return mapAsset(asset, []);
    });
    r.get('/v1/assets/:id/', { schema: { tags: ['assets'], headers: S.AuthHeaders, params: S.IdParams, response: { 200: S.Asset, ...errors } } }, async (request) => {
      const asset = await deps.assets.require(request.auth, request.params.id);
      return mapAsset(asset, (await deps.assets.inspectionIds([asset.id])).get(asset.id) ?? []);
    });

    // Inspections
    r.get('/v1/inspections/statuses/', { schema: { tags: ['inspections'], headers: S.AuthHeaders, response: { 200: Type.Array(S.StatusRecord), ...errors } } }, async () => STATUSES);
    r.get('/v1/inspections/additional_statuses/', { schema: { tags: ['inspections'], headers: S.AuthHeaders, response: { 200: Type.Array(S.StatusRecord), ...errors } } }, async () =>
      ADDITIONAL_STATUSES,
    );
    r.get('/v1/inspections/', { schema: { tags: ['inspections'], headers: S.AuthHeaders, response: { 200: Type.Array(S.Inspection), ...errors } } }, async (request) =>
      deps.inspections.list(request.auth),
    );
    r.post(
      '/v1/inspections',
      { schema: { tags: ['inspections'], headers: S.AuthHeaders, body: S.CreateInspectionBody, response: { 201: S.Inspection, ...errors } } },
      async (request, reply) => {
        const { asset, ...rest } = request.body;
        const created = await deps.inspections.create(request.auth, {
          ...rest,
          asset: typeof asset === 'number' ? asset : undefined,
          asset_data: typeof asset === 'object' ? asset : undefined,
          inspection_date: rest.inspection_date ? new Date(rest.inspection_date.replace(' ', 'T') + (/[zZ]|[+-]\d{2}:?\d{2}$/.test(rest.inspection_date) ? '' : 'Z')).toISOString() : rest.inspection_date,
        });
        reply.status(201);
        return created;
      },
    );
    r.get('/v1/inspections/:id/', { schema: { tags: ['inspections'], headers: S.AuthHeaders, params: S.IdParams, response: { 200: S.Inspection, ...errors } } }, async (request) =>
      deps.inspections.get(request.auth, request.params.id),
    );
    r.get(
      '/v1/inspections/:id/s3_credentials/',
      { schema: { tags: ['uploads'], headers: S.AuthHeaders, params: S.IdParams, response: { 200: S.StorageCredentials, ...errors } } },
      async (request) => deps.inspections.storageCredentials(request.auth, request.params.id),
    );
    r.post(
      '/v1/inspections/:id/register_images/',
      { schema: { tags: ['uploads'], headers: S.AuthHeaders, params: S.IdParams, body: S.RegisterImagesBody, response: { 200: S.RegisterResult, ...errors } } },
      async (request) => deps.inspections.registerImages(request.auth, request.params.id, request.body.image_keys),
    );
    r.post(
      '/v1/inspections/:id/process/',
      {
        schema: {
          tags: ['processing'],
          headers: S.AuthHeaders,
          params: S.IdParams,
          body: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
          response: { 202: S.Inspection, ...errors },
        },
      },
      async (request, reply) => {
        reply.status(202);
        return deps.inspections.process(request.auth, request.params.id);
      },
    );
    r.get(
      '/v1/inspections/:id/cameras/',
      { schema: { tags: ['processing'], headers: S.AuthHeaders, params: S.IdParams, response: { 200: Type.Array(S.Camera), ...errors } } },
      async (request) => deps.inspections.cameras(request.auth, request.params.id),
    );
  });
}
