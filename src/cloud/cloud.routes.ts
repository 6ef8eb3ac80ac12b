// HTTP routes of the cloud service: bind the request, call one service method. Everything under
// the protected scope needs `Authorization: Bearer <token>`.
import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { HttpServer } from '../infra/http/http-server.ts';
import type { CloudPrincipal, OAuthService } from './auth/oauth.service.ts';
import type { ProjectService } from './projects/project.service.ts';
import type { ProjectGroupService } from './project-groups/project-group.service.ts';
import * as S from './cloud.schemas.ts';

declare module 'fastify' {
  interface FastifyRequest {
    cloudPrincipal: CloudPrincipal;
  }
}

export interface CloudRouteDeps {
  oauth: OAuthService;
  projects: ProjectService;
  groups: ProjectGroupService;
}

const errors = { 400: S.FieldErrorsBody, 401: S.ErrorBody, 403: S.ErrorBody, 404: S.ErrorBody, 409: S.ErrorBody };

export async function registerCloudRoutes(app: HttpServer, deps: CloudRouteDeps): Promise<void> {
  // Token parameters may come as multipart form fields too.
  await app.register(multipart, { attachFieldsToBody: 'keyValues', limits: { fileSize: 0, files: 0 } });

  app.post(
    '/oauth2/token/',
    {
      schema: {
        summary: 'Client-credentials token (parameters in the query string, urlencoded, multipart or JSON)',
        tags: ['auth'],
        querystring: S.TokenRequest,
        body: Type.Union([S.TokenRequest, Type.Null()]),
        response: { 200: S.TokenResponse, 400: S.ErrorBody, 401: S.ErrorBody },
      },
    },
    async (request) => {
      const params = { ...request.query, ...(request.body ?? {}) };
      return deps.oauth.issueToken(params.grant_type, params.client_id, params.client_secret);
    },
  );
  app.get('/.well-known/jwks.json', { schema: { summary: 'Public key (JWKS)', tags: ['auth'] } }, async () => deps.oauth.jwks());
  app.get('/oauth2/public-key/', { schema: { summary: 'Public key (PEM)', tags: ['auth'] } }, async (_request, reply) =>
    reply.type('application/x-pem-file').send(deps.oauth.publicKeyPem()),
  );

  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.decorateRequest('cloudPrincipal', null as unknown as CloudPrincipal);
    scope.addHook('onRequest', async (request) => {
      request.cloudPrincipal = await deps.oauth.authenticate(request.headers.authorization);
    });
    const p = deps.projects;

    scope.post(
      '/project/api/v3/projects/',
      { schema: { tags: ['projects'], body: S.CreateProjectBody, response: { 201: S.ProjectDetails, ...errors } } },
      async (request, reply) => {
        request.log.info({ userAgent: request.headers['user-agent'] }, 'create project');
        reply.status(201);
        return p.create(request.cloudPrincipal, request.body, request.headers['user-agent']);
      },
    );
    scope.get('/project/api/v3/projects/', { schema: { tags: ['projects'], response: { 200: Type.Array(S.ProjectDetails), ...errors } } }, async (request) =>
      p.list(request.cloudPrincipal),
    );
    scope.get(
      '/project/api/v3/projects/:id/',
      { schema: { tags: ['projects'], params: S.IdParams, response: { 200: S.ProjectDetails, ...errors } } },
      async (request) => p.get(request.cloudPrincipal, request.params.id),
    );
    scope.delete(
      '/project/api/v3/projects/:id/',
      { schema: { tags: ['projects'], params: S.IdParams, response: { 204: Type.Null(), ...errors } } },
      async (request, reply) => {
        await p.remove(request.cloudPrincipal, request.params.id);
        return reply.status(204).send(null);
      },
    );
    scope.get(
      '/project/api/v3/projects/:id/s3_credentials/',
      { schema: { tags: ['uploads'], params: S.IdParams, response: { 200: S.StorageCredentials, ...errors } } },
      async (request) => p.credentials(request.cloudPrincipal, request.params.id),
    );
    scope.post(
      '/project/api/v3/projects/:id/inputs/bulk_register/',
      { schema: { tags: ['uploads'], params: S.IdParams, body: S.BulkRegisterBody, response: { 200: S.RegisterResult, ...errors } } },
      async (request) => p.bulkRegister(request.cloudPrincipal, request.params.id, request.body.input_file_keys),
    );
    scope.post(
      '/project/api/v3/projects/:id/start_processing/',
      {
        schema: {
          tags: ['processing'],
          description: 'Body: empty, JSON `{tags}` or a form with `tags` (comma-separated or repeated).',
          params: S.IdParams,
          body: Type.Optional(S.StartProcessingBody),
          response: { 202: S.ProjectDetails, ...errors },
        },
      },
      async (request, reply) => {
        reply.status(202);
        return p.startProcessing(request.cloudPrincipal, request.params.id, request.body?.tags);
      },
    );
    scope.get(
      '/project/api/v3/projects/:id/outputs/',
      { schema: { tags: ['processing'], params: S.IdParams, response: { 200: S.OutputsResponse, ...errors } } },
      async (request) => p.outputs(request.cloudPrincipal, request.params.id),
    );

    const g = deps.groups;
    for (const path of ['/project/api/v3/project-groups/', '/project/api/v3/project_groups/']) {
      const hide = path.includes('_');
      scope.post(path, { schema: { hide, tags: ['project groups'], body: S.CreateProjectGroupBody, response: { 201: S.ProjectGroup, ...errors } } }, async (request, reply) => {
        reply.status(201);
        return g.create(request.cloudPrincipal, request.body);
      });
      scope.get(path, { schema: { hide, tags: ['project groups'], response: { 200: Type.Array(S.ProjectGroup), ...errors } } }, async (request) =>
        g.list(request.cloudPrincipal),
      );
      scope.get(`${path}:id/`, { schema: { hide, tags: ['project groups'], params: S.IdParams, response: { 200: S.ProjectGroup, ...errors } } }, async (request) =>
        g.get(request.cloudPrincipal, request.params.id),
      );
    }
  });
}
