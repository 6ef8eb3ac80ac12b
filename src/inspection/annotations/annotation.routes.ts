// Annotation routes (CONTRACT section 2): create (?coords_3d=true), types, get, PUT, PATCH,
// DELETE, and the annotations of an inspection.
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { ListOf, respondList } from '../http/lists.ts';
import { emptyBodyAsObject } from '../http/empty-body.ts';
import * as S from '../inspection.schemas.ts';
import * as A from './annotation.schemas.ts';

const errors = S.errorResponses;
const tags = ['annotations'];

export function registerAnnotationRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.post(
    '/v1/annotations/',
    {
      schema: {
        tags,
        description:
          '`photo_id` must be the photo_id of a camera of the inspection; `data.coords_2d` four corners of an axis-aligned rectangle in 0..1; `number` is generated per inspection. With `?coords_3d=true` the service computes coords_3d: the reconstructed point nearest the camera along the ray through the centre of the rectangle (within a cone of half the smaller side of the rectangle, 3 to 25 px), in the output coordinate system (extras), metres; null when the inspection has no point cloud and calibrated cameras (engine `exif`) or no point lies in the cone. An inspection holds at most INSPECTION_MAX_ANNOTATIONS annotations (400 on `inspection` beyond).',
        headers: S.AuthHeaders,
        querystring: A.CreateAnnotationQuery,
        body: A.CreateAnnotationBody,
        response: { 201: A.Annotation, ...errors },
      },
    },
    async (request, reply) => {
      const created = await deps.annotations.create(request.auth, request.body, { coords3d: request.query.coords_3d === true });
      reply.status(201);
      return created;
    },
  );
  r.get(
    '/v1/annotations/types/',
    { schema: { tags, description: "The distinct types of the request's annotations plus the default types.", headers: S.AuthHeaders, querystring: S.PageQuery, response: { 200: ListOf(A.AnnotationType), ...errors } } },
    async (request) => respondList(request, request.query, await deps.annotations.types(request.auth)),
  );
  r.get('/v1/annotations/:id/', { schema: { tags, headers: S.AuthHeaders, params: S.IdParams, response: { 200: A.Annotation, ...errors } } }, async (request) =>
    deps.annotations.get(request.auth, request.params.id),
  );
  r.put(
    '/v1/annotations/:id/',
    {
      preValidation: emptyBodyAsObject,
      schema: {
        tags,
        description: '`type`, `inspection` and `data` required; every field overwritten (missing optional fields are reset to their defaults). `photo_id` cannot change.',
        headers: S.AuthHeaders,
        params: S.IdParams,
        body: A.PutAnnotationBody,
        response: { 200: A.Annotation, ...errors },
      },
    },
    async (request) => deps.annotations.update(request.auth, request.params.id, request.body, false),
  );
  r.patch(
    '/v1/annotations/:id/',
    { preValidation: emptyBodyAsObject, schema: { tags, headers: S.AuthHeaders, params: S.IdParams, body: A.PatchAnnotationBody, response: { 200: A.Annotation, ...errors } } },
    async (request) => deps.annotations.update(request.auth, request.params.id, request.body, true),
  );
  r.delete('/v1/annotations/:id/', { schema: { tags, headers: S.AuthHeaders, params: S.IdParams, response: { 204: S.NoContent, ...errors } } }, async (request, reply) => {
    await deps.annotations.remove(request.auth, request.params.id);
    return reply.status(204).send(null);
  });
  r.get(
    '/v1/inspections/:id/annotations/',
    { schema: { tags, headers: S.AuthHeaders, params: S.IdParams, querystring: S.PageQuery, response: { 200: ListOf(A.Annotation), ...errors } } },
    async (request) => respondList(request, request.query, await deps.annotations.listOfInspection(request.auth, request.params.id)),
  );
}
