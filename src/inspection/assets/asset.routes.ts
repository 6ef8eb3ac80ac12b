// Asset routes (CONTRACT section 2): list (?search=), types, create, get, PUT, PATCH, DELETE,
// and the inspections of an asset.
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { ListOf, respondList } from '../http/lists.ts';
import { emptyBodyAsObject } from '../http/empty-body.ts';
import * as S from '../inspection.schemas.ts';

const errors = S.errorResponses;
const tags = ['assets'];

export function registerAssetRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.get('/v1/assets/types/', { schema: { tags, headers: S.AuthHeaders, querystring: S.PageQuery, response: { 200: ListOf(S.AssetTypeRecord), ...errors } } }, async (request) =>
    respondList(request, request.query, deps.assets.types()),
  );
  r.get(
    '/v1/assets/',
    { schema: { tags, description: "The request's assets; deleted ones excluded.", headers: S.AuthHeaders, querystring: S.SearchQuery, response: { 200: ListOf(S.Asset), ...errors } } },
    async (request) => respondList(request, request.query, deps.assets.list(request.auth, request.query.search)),
  );
  r.post('/v1/assets/', { schema: { tags, headers: S.AuthHeaders, body: S.AssetBody, response: { 201: S.Asset, ...errors } } }, async (request, reply) => {
    const asset = await deps.assets.create(request.auth, request.body);
    reply.status(201);
    return deps.assets.record(asset);
  });
  r.get('/v1/assets/:id/', { schema: { tags, headers: S.AuthHeaders, params: S.IdParams, response: { 200: S.Asset, ...errors } } }, async (request) =>
    deps.assets.record(await deps.assets.require(request.auth, request.params.id)),
  );
  r.put(
    '/v1/assets/:id/',
    {
      preValidation: emptyBodyAsObject,
      schema: {
        tags,
        description: 'Every field is overwritten: latitude, longitude and description are cleared when absent; type is kept when absent.',
        headers: S.AuthHeaders,
        params: S.IdParams,
        body: S.AssetPutBody,
        response: { 200: S.Asset, ...errors },
      },
    },
    async (request) => deps.assets.record(await deps.assets.update(request.auth, request.params.id, request.body, false)),
  );
  r.patch(
    '/v1/assets/:id/',
    { preValidation: emptyBodyAsObject, schema: { tags, headers: S.AuthHeaders, params: S.IdParams, body: S.AssetPatchBody, response: { 200: S.Asset, ...errors } } },
    async (request) => deps.assets.record(await deps.assets.update(request.auth, request.params.id, request.body, true)),
  );
  r.delete(
    '/v1/assets/:id/',
    {
      schema: {
        tags,
        description:
          'Deletes the asset, its inspections (and their cloud projects) and its project group. Allowed only when every inspection of the asset is in a stable status (409 otherwise).',
        headers: S.AuthHeaders,
        params: S.IdParams,
        response: { 204: S.NoContent, ...errors },
      },
    },
    async (request, reply) => {
      await deps.deletion.deleteAsset(request.auth, request.params.id);
      return reply.status(204).send(null);
    },
  );
  r.get(
    '/v1/assets/:id/inspections/',
    {
      schema: {
        tags,
        headers: S.AuthHeaders,
        params: S.IdParams,
        querystring: S.PageQuery,
        response: { 200: ListOf(S.Inspection), ...errors },
      },
    },
    async (request) => respondList(request, request.query, await deps.inspections.listOfAsset(request.auth, request.params.id)),
  );
}

