// GCPs, manual tie points and their marks of a project (cloud spec; CONTRACT: 201 with what was
// stored, before processing only): POST …/gcp/register, …/mtp/, …/mark/register/ and GET …/gcp/,
// …/mtp/, …/mark/ (control-point.service.ts).
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { ControlPointService } from './control-point.service.ts';
import * as S from '../cloud.schemas.ts';

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
      reply.status(201);
      return cp.registerMarks(request.cloudPrincipal, request.params.id, request.body.marks);
    },
  );
  for (const [path, field] of [
    ['gcp', 'gcps'],
    ['mtp', 'mtps'],
    ['mark', 'marks'],
  ] as const) {
    scope.get(
      `/project/api/v3/projects/:id/${path}/`,
      { schema: { tags: ['control points'], summary: `Registered ${field}`, params: S.IdParams, response: { 200: Type.Pick(S.ControlPointsResult, [field]), ...errors } } },
      async (request) => {
        const all = await cp.list(request.cloudPrincipal, request.params.id);
        return { [field]: all[field] } as never;
      },
    );
  }
}
