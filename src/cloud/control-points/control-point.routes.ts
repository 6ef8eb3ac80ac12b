// GCPs, manual tie points and their marks of a project (cloud spec; CONTRACT: 201 with what was
// stored, before processing only): POST …/gcp/register, …/mtp/, …/mark/register/ and GET …/gcp/,
// …/mtp/, …/mark/ (control-point.service.ts). The marks (up to 100,000, ~10 MB) are answered
// page by page (infra/http/json-stream.ts), in the shape their response schema gives.
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { ControlPointService } from './control-point.service.ts';
import * as S from '../cloud.schemas.ts';
import { jsonListStream, pagesOf } from '../../infra/http/json-stream.ts';

const errors = S.ProjectRouteErrors;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function registerControlPointRoutes(scope: FastifyInstance<any, any, any, any, TypeBoxTypeProvider>, cp: ControlPointService): void {
  scope.post(
    '/project/api/v3/projects/:id/gcp/register',
    {
      schema: {
        tags: ['control points'],
        description: 'Registers GCPs (after creation, before processing: 409 otherwise). Also served with a trailing slash. 201 with what was stored.',
        params: S.IdParams,
        body: S.GcpsBody,
        response: { 201: S.GcpsResult, ...errors },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return cp.registerGcps(request.cloudPrincipal, request.params.id, request.body.gcps);
    },
  );
  scope.post(
    '/project/api/v3/projects/:id/mtp/',
    {
      schema: {
        tags: ['control points'],
        description: 'Registers manual tie points (after creation, before processing). 201 with what was stored.',
        params: S.IdParams,
        body: S.MtpsBody,
        response: { 201: S.MtpsResult, ...errors },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return cp.registerMtps(request.cloudPrincipal, request.params.id, request.body.mtps);
    },
  );
  scope.post(
    '/project/api/v3/projects/:id/mark/register/',
    {
      schema: {
        tags: ['control points'],
        description: 'Registers marks of registered GCPs/MTPs in registered images, pixel coordinates inside the image. 201 with what was stored.',
        params: S.IdParams,
        body: S.MarksBody,
        response: { 201: S.MarksResult, ...errors },
      },
    },
    async (request, reply) => {
      const { marks } = await cp.registerMarks(request.cloudPrincipal, request.params.id, request.body.marks);
      const records = marks.map(({ gcp, photo, x, y }) => ({ gcp, photo, x, y }));
      return reply.status(201).type(JSON_TYPE).send(jsonListStream('marks', pagesOf(records, ANSWER_PAGE_SIZE)) as never);
    },
  );
  const listSchema = (field: 'gcps' | 'mtps' | 'marks') => ({
    tags: ['control points'],
    summary: `Registered ${field}`,
    params: S.IdParams,
    response: { 200: Type.Pick(S.ControlPointsResult, [field]), ...errors },
  });
  scope.get('/project/api/v3/projects/:id/gcp/', { schema: listSchema('gcps') }, async (request) => cp.listGcps(request.cloudPrincipal, request.params.id));
  scope.get('/project/api/v3/projects/:id/mtp/', { schema: listSchema('mtps') }, async (request) => cp.listMtps(request.cloudPrincipal, request.params.id));
  scope.get('/project/api/v3/projects/:id/mark/', { schema: listSchema('marks') }, async (request, reply) => {
    const pages = await cp.markPages(request.cloudPrincipal, request.params.id);
    return reply.type(JSON_TYPE).send(jsonListStream('marks', pages) as never);
  });
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** Marks serialised per turn of the event loop in a registration's answer (already in memory: a few milliseconds). */
const ANSWER_PAGE_SIZE = 2000;
