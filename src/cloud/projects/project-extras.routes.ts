// A project's extra files (issue 30 §5; Pix4D's demo script registers its processing template
// so): POST/GET /project/api/v3/projects/{id}/extras/ (project-extras.ts; docs/cloud-service.md).
import { Type } from 'typebox';
import { LIMITS } from '../../shared/schemas/limits.ts';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { ProjectExtrasService } from './project-extras.ts';
import * as S from '../cloud.schemas.ts';

const errors = S.ProjectRouteErrors;

export const RegisterExtrasBody = Type.Object({
  file_key: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.key, description: "Key of a file uploaded under the project's prefix (the real API's field)." })),
  file_keys: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.key }), { minItems: 1, maxItems: 100, description: 'Extension: several keys in one call, all or nothing.' }),
  ),
});
export const ExtrasList = Type.Object({
  extras: Type.Array(
    Type.Object({
      file_key: Type.String(),
      size: Type.Integer({ description: 'Bytes, when registered.' }),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function registerProjectExtrasRoutes(scope: FastifyInstance<any, any, any, any, TypeBoxTypeProvider>, extras: ProjectExtrasService): void {
  scope.post(
    '/project/api/v3/projects/:id/extras/',
    {
      schema: {
        tags: ['uploads'],
        summary: 'Register extra files (a processing template, a GCP file...)',
        description:
          'Files uploaded under the project\'s prefix with its storage credentials, named by `file_key` (or `file_keys`, an extension), before processing starts (409 after). ' +
          `The keys are checked as bulk_register checks images (under the prefix, present in storage: 400 otherwise), all or nothing; at most 100 extras per project. 201 with the project's extras.`,
        params: S.IdParams,
        body: RegisterExtrasBody,
        response: { 201: ExtrasList, ...errors },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return extras.register(request.cloudPrincipal, request.params.id, request.body);
    },
  );
  scope.get(
    '/project/api/v3/projects/:id/extras/',
    { schema: { tags: ['uploads'], summary: 'Registered extra files', params: S.IdParams, response: { 200: ExtrasList, ...errors } } },
    async (request) => extras.list(request.cloudPrincipal.organizationId, request.params.id),
  );
}
