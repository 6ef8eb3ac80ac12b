// Inspection routes (CONTRACT section 2): statuses, list, create, get, PUT, PATCH, DELETE,
// storage credentials, image registration, process, cameras, bundle.
import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { ListOf, respondList } from '../http/lists.ts';
import { emptyBodyAsObject } from '../http/empty-body.ts';
import { ADDITIONAL_STATUSES, STATUSES } from './statuses.ts';
import { sendJsonArrayPages } from './camera-list.ts';
import * as S from '../inspection.schemas.ts';

const errors = S.errorResponses;
const tags = ['inspections'];

export function registerInspectionCrudRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.get('/v1/inspections/statuses/', { schema: { tags, headers: S.AuthHeaders, querystring: S.PageQuery, response: { 200: ListOf(S.StatusRecord), ...errors } } }, async (request) =>
    respondList(request, request.query, STATUSES),
  );
  r.get(
    '/v1/inspections/additional_statuses/',
    { schema: { tags, headers: S.AuthHeaders, querystring: S.PageQuery, response: { 200: ListOf(S.StatusRecord), ...errors } } },
    async (request) => respondList(request, request.query, ADDITIONAL_STATUSES),
  );
  r.get(
    '/v1/inspections/',
    { schema: { tags, description: "The request's inspections; deleted ones excluded.", headers: S.AuthHeaders, querystring: S.PageQuery, response: { 200: ListOf(S.Inspection), ...errors } } },
    async (request) => respondList(request, request.query, deps.inspections.list(request.auth)),
  );
  r.post(
    '/v1/inspections',
    {
      schema: {
        tags,
        description: 'With `new_asset: true`, `asset` is an asset body (at least `type` and `name`) created with the inspection.',
        headers: S.AuthHeaders,
        body: S.CreateInspectionBody,
        response: { 201: S.Inspection, ...errors },
      },
    },
    async (request, reply) => {
      const { asset, ...rest } = request.body;
      const created = await deps.inspections.create(request.auth, {
        ...rest,
        asset: typeof asset === 'number' ? asset : undefined,
        asset_data: typeof asset === 'object' ? asset : undefined,
      });
      reply.status(201);
      return created;
    },
  );
  r.get('/v1/inspections/:id/', { schema: { tags, headers: S.AuthHeaders, params: S.IdParams, response: { 200: S.Inspection, ...errors } } }, async (request) =>
    deps.inspections.get(request.auth, request.params.id),
  );
  const updateDescription =
    'Overwrites the fields given (no field is required, so PUT and PATCH behave alike). A change of `status` to a started, finished or error value e-mails the creator unless `skip_email=true`. `processing_parameters` may change only before processing starts (409 after: allowance rule 5). `status` 24 deletes the inspection\'s photos, outputs, inputs ZIP and cloud project as retention does (409 while work is under way); after that the status stays 24 (410 `purged`).';
  for (const method of ['put', 'patch'] as const) {
    r[method](
      '/v1/inspections/:id/',
      {
        preValidation: emptyBodyAsObject,
        schema: {
          tags,
          description: updateDescription,
          headers: S.AuthHeaders,
          params: S.IdParams,
          querystring: S.SkipEmailQuery,
          body: S.UpdateInspectionBody,
          response: { 200: S.Inspection, ...errors, ...S.purgedResponse },
        },
      },
      async (request) => deps.inspections.update(request.auth, request.params.id, request.body, { skipEmail: request.query.skip_email === true }),
    );
  }
  r.delete(
    '/v1/inspections/:id/',
    {
      schema: {
        tags,
        description: 'Only in a stable status (409 otherwise). Deletes the cloud project too; deleting a main inspection deletes its retries.',
        headers: S.AuthHeaders,
        params: S.IdParams,
        response: { 204: S.NoContent, ...errors },
      },
    },
    async (request, reply) => {
      await deps.deletion.deleteInspection(request.auth, request.params.id);
      return reply.status(204).send(null);
    },
  );
  r.get('/v1/inspections/:id/bundle/', { schema: { tags, description: 'The main inspection and all its retries.', headers: S.AuthHeaders, params: S.IdParams, querystring: S.PageQuery, response: { 200: ListOf(S.Inspection), ...errors } } }, async (request) =>
    respondList(request, request.query, await deps.inspections.bundle(request.auth, request.params.id)),
  );
  r.get(
    '/v1/inspections/:id/s3_credentials/',
    { schema: { tags: ['uploads'], headers: S.AuthHeaders, params: S.IdParams, response: { 200: S.StorageCredentials, ...errors, ...S.purgedResponse } } },
    async (request) => deps.inspections.storageCredentials(request.auth, request.params.id),
  );
  r.post(
    '/v1/inspections/:id/register_images/',
    { schema: { tags: ['uploads'], headers: S.AuthHeaders, params: S.IdParams, body: S.RegisterImagesBody, response: { 200: S.RegisterResult, ...errors, ...S.purgedResponse } } },
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
        response: { 202: S.Inspection, ...errors, ...S.purgedResponse },
      },
    },
    async (request, reply) => {
      reply.status(202);
      return deps.inspections.process(request.auth, request.params.id);
    },
  );
  r.get(
    '/v1/inspections/:id/cameras/',
    { schema: { tags: ['processing'], headers: S.AuthHeaders, params: S.IdParams, querystring: S.PageQuery, response: { 200: ListOf(S.Camera), ...errors, ...S.purgedResponse } } },
    async (request, reply) => {
      const cameras = await deps.inspections.cameras(request.auth, request.params.id);
      if (request.query.page !== undefined || request.query.page_size !== undefined) return respondList(request, request.query, cameras);
      // Performance (bench/README.md, "Scale"): the whole list is streamed page by page, each
      // camera's record the JSON text the database keeps for it (camera-list.ts).
      return sendJsonArrayPages(reply as FastifyReply, cameras.pages());
    },
  );
}
