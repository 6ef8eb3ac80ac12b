// Measurement routes (CONTRACT section 2): GET and POST on /v1/inspections/{id}/measurements/,
// PUT, PATCH and DELETE on /v1/inspections/{id}/measurements/{annotation_id}/.
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { Type } from 'typebox';
import { emptyBodyAsObject } from '../http/empty-body.ts';
import { respondResults, ResultsOf } from '../http/lists.ts';
import * as S from '../inspection.schemas.ts';
import * as M from './measurement.schemas.ts';

const errors = S.errorResponses;
const tags = ['measurements'];
const geometryRules =
  '`geometry.type` is Point, LineString (2+ positions) or Polygon (rings of 4+ positions, closed); positions are three numbers; `bbox` is computed by the service.';

export function registerMeasurementRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.get(
    '/v1/inspections/:id/measurements/',
    {
      schema: {
        tags,
        description:
          '`{results: [...]}` with every measurement of the inspection (at most INSPECTION_MAX_MEASUREMENTS); with `page` and/or `page_size`, ' +
          'one page of them in the envelope `{count, next, previous, results}`, as every list.',
        headers: S.AuthHeaders,
        params: S.IdParams,
        querystring: S.PageQuery,
        response: { 200: ResultsOf(M.Measurement), ...errors },
      },
    },
    async (request) => respondResults(request, request.query, await deps.measurements.list(request.auth, request.params.id)),
  );
  r.post(
    '/v1/inspections/:id/measurements/',
    {
      schema: {
        tags,
        description: `Creates every measurement of the body or none; none either when the inspection would hold more than INSPECTION_MAX_MEASUREMENTS (400 on \`annotations\`). ${geometryRules}`,
        headers: S.AuthHeaders,
        params: S.IdParams,
        body: M.CreateMeasurementsBody,
        response: { 201: Type.Object({ annotations: Type.Array(M.Measurement) }), ...errors },
      },
    },
    async (request, reply) => {
      const created = await deps.measurements.create(request.auth, request.params.id, request.body.annotations);
      reply.status(201);
      return created;
    },
  );
  r.put(
    '/v1/inspections/:id/measurements/:annotation_id/',
    {
      preValidation: emptyBodyAsObject,
      schema: {
        tags,
        description: `properties, tags and geometry required. ${geometryRules}`,
        headers: S.AuthHeaders,
        params: M.MeasurementParams,
        body: M.PutMeasurementBody,
        response: { 200: M.Measurement, ...errors },
      },
    },
    async (request) => deps.measurements.update(request.auth, request.params.id, request.params.annotation_id, request.body),
  );
  r.patch(
    '/v1/inspections/:id/measurements/:annotation_id/',
    {
      preValidation: emptyBodyAsObject,
      schema: { tags, description: geometryRules, headers: S.AuthHeaders, params: M.MeasurementParams, body: M.PatchMeasurementBody, response: { 200: M.Measurement, ...errors } },
    },
    async (request) => deps.measurements.update(request.auth, request.params.id, request.params.annotation_id, request.body),
  );
  r.delete(
    '/v1/inspections/:id/measurements/:annotation_id/',
    { schema: { tags, headers: S.AuthHeaders, params: M.MeasurementParams, response: { 204: S.NoContent, ...errors } } },
    async (request, reply) => {
      await deps.measurements.remove(request.auth, request.params.id, request.params.annotation_id);
      return reply.status(204).send(null);
    },
  );
}
