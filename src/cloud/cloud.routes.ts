// HTTP routes of the cloud service: bind the request, call one service method. Everything under
// the protected scope needs `Authorization: Bearer <token>`; a read-only token (scope read:cloud)
// calls its GET and HEAD routes only (cloud-scopes.ts: one check here, for every route).
import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { HttpServer } from '../infra/http/http-server.ts';
import { ApiError } from '../infra/http/errors.ts';
import type { CloudPrincipal, OAuthService } from './auth/oauth.service.ts';
import { basicClientCredentials, oauthErrorBodies } from './auth/oauth-errors.ts';
import { requireScopeFor } from './auth/cloud-scopes.ts';
import type { ProjectService } from './projects/project.service.ts';
import type { ProjectExtrasService } from './projects/project-extras.ts';
import { admitShareToken, ownOrganizationPrincipal, type ShareGrant, type ShareLinkService } from './projects/share-links.ts';
import type { ProjectGroupService } from './project-groups/project-group.service.ts';
import type { ControlPointService } from './control-points/control-point.service.ts';
import type { InputsBundleService } from './bundles/inputs-bundle.ts';
import { LEGACY_MOVE_SUNSET, type DriveService } from './drive/drive.service.ts';
import { PageQuery, paginate } from './common/pagination.ts';
import { requestPublicUrl } from '../infra/http/http-edge.ts';
import type { EngineSet } from './processing/engines.ts';
import { registerCapabilitiesRoute } from './processing/capabilities.routes.ts';
import { registerProjectExtrasRoutes } from './projects/project-extras.routes.ts';
import { registerControlPointRoutes } from './control-points/control-point.routes.ts';
import { registerShareLinkRoutes } from './projects/share-link.routes.ts';
import * as S from './cloud.schemas.ts';
import type { CloudWebhookService } from './webhooks/cloud-webhooks.ts';
import { registerCloudWebhookRoutes } from './webhooks/cloud-webhook.routes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    cloudPrincipal: CloudPrincipal;
    /** Set instead of cloudPrincipal when a project's share token opens the read (share-links.ts). */
    shareGrant: ShareGrant | null;
  }
}

export interface CloudRouteDeps {
  oauth: OAuthService;
  webhooks: CloudWebhookService;
  projects: ProjectService;
  groups: ProjectGroupService;
  controlPoints: ControlPointService;
  bundles: InputsBundleService;
  drive: DriveService;
  /** The engines a start_processing request may choose (named in its OpenAPI description), and what they make. */
  engines: EngineSet;
  extras: ProjectExtrasService;
  shareLinks: ShareLinkService;
}

const errors = S.ProjectRouteErrors;

export async function registerCloudRoutes(app: HttpServer, deps: CloudRouteDeps): Promise<void> {
  // Token parameters and start_processing's tags may come as multipart form fields too.
  await app.register(multipart, { limits: { fileSize: 0, files: 0 } });
  app.addHook('preValidation', async (request) => {
    if (request.isMultipart()) request.body = await multipartFields(request);
  });

  app.post(
    '/oauth2/token/',
    {
      schema: {
        summary: 'Client-credentials token (parameters in the query string, urlencoded, multipart or JSON)',
        tags: ['auth'],
        querystring: S.TokenRequest,
        body: Type.Union([S.TokenRequest, Type.Null()]),
        description:
          'Client credentials grant (RFC 6749 4.4): `client_id` and `client_secret` as parameters, or HTTP Basic. `scope`, when sent, must be among read:cloud write:cloud (also spelled cloud:read cloud:write). ' +
          '`scope=read:cloud` alone gives a read-only token: its calls other than GET and HEAD answer 403 `permission_denied`, and its storage credentials only read. ' +
          'Without `scope`, or with write:cloud, the token has both; the response\'s `scope` says what was granted. ' +
          'Errors carry RFC 6749 5.2\'s `error` and `error_description` beside `detail`/`code`: 400 invalid_request, unsupported_grant_type, invalid_scope; 401 invalid_client with WWW-Authenticate.',
        response: { 200: S.TokenResponse, 400: S.OAuthErrorBody, 401: S.OAuthErrorBody },
      },
      onSend: oauthErrorBodies,
    },
    async (request) => {
      const params = { ...request.query, ...(request.body ?? {}) };
      const basic = basicClientCredentials(request.headers.authorization);
      return deps.oauth.issueToken({ grantType: params.grant_type, clientId: params.client_id, clientSecret: params.client_secret, scope: params.scope, organizationUuid: params.organization_uuid, basic });
    },
  );
  app.get('/.well-known/jwks.json', { schema: { summary: 'Public key (JWKS)', tags: ['auth'] } }, async () => deps.oauth.jwks());
  app.get('/oauth2/public-key/', { schema: { summary: 'Public key (PEM)', tags: ['auth'] } }, async (_request, reply) =>
    reply.type('application/x-pem-file').send(deps.oauth.publicKeyPem()),
  );

  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.decorateRequest('cloudPrincipal', null as unknown as CloudPrincipal);
    scope.decorateRequest('shareGrant', null);
    scope.addHook('onRequest', async (request, reply) => {
      const grant = await admitShareToken(request, deps.shareLinks);
      const own = grant && (await ownOrganizationPrincipal(request, grant, deps.oauth));
      request.shareGrant = own ? null : (grant ?? null);
      if (request.shareGrant) {
        request.log = reply.log = request.log.child({ shareProjectId: request.shareGrant.shareProjectId, userAgent: request.headers['user-agent'] ?? null });
        return;
      }
      request.cloudPrincipal = own || (await deps.oauth.authenticate(request.headers.authorization));
      // Clients name their software in User-Agent (cloud spec, "What the service does" 5): every
      // line logged about this request, "request completed" included, carries it.
      const log = request.log.child({ clientId: request.cloudPrincipal.clientId, userAgent: request.headers['user-agent'] ?? null });
      request.log = log;
      reply.log = log;
      requireScopeFor(request.method, request.cloudPrincipal);
    });
    const p = deps.projects;

    scope.post(
      '/project/api/v3/projects/',
      {
        schema: {
          tags: ['projects'],
          description:
            '`name` is required. `coordinate_system`: OGC WKT of an EPSG-registered system (400 otherwise); its semantic rules fail processing with 10611-10615. ' +
            '`geoid_model` / `geoid_height`: see docs/cloud-service.md.',
          body: S.CreateProjectBody,
          response: { 201: S.ProjectDetails, ...errors },
        },
      },
      async (request, reply) => {
        request.log.info('create project');
        reply.status(201);
        return p.create(request.cloudPrincipal, request.body, request.headers['user-agent']);
      },
    );
    scope.get(
      '/project/api/v3/projects/',
      { schema: { tags: ['projects'], querystring: PageQuery, response: { 200: S.ListOf(S.ProjectDetails), ...errors } } },
      async (request) => p.list(request.cloudPrincipal, request.query, requestPublicUrl(request)),
    );
    const shareReadable = 'Also read with `?shareToken=` (the project\'s share link, POST …/share_link/) and no bearer token.';
    scope.get(
      '/project/api/v3/projects/:id/',
      { schema: { tags: ['projects'], description: shareReadable, params: S.IdParams, querystring: S.ShareTokenQuery, response: { 200: S.ProjectDetails, ...errors } } },
      async (request) => p.get(request.shareGrant ?? request.cloudPrincipal, request.params.id),
    );
    scope.patch(
      '/project/api/v3/projects/:id/',
      {
        schema: {
          tags: ['projects'],
          deprecated: true,
          description: 'Deprecated (removal planned for the third quarter of 2025): moves the project to `project_group_id` (null: the organization root). Use PUT /common/api/v4/drive/move_batch/.',
          params: S.IdParams,
          body: S.LegacyMoveBody,
          response: { 200: S.ProjectDetails, ...errors },
        },
      },
      async (request, reply) => {
        reply.header('Deprecation', 'true');
        reply.header('Sunset', LEGACY_MOVE_SUNSET);
        reply.header('Link', '</common/api/v4/drive/move_batch/>; rel="successor-version"');
        await deps.drive.legacyMove(request.cloudPrincipal, request.params.id, request.body.project_group_id);
        return p.get(request.cloudPrincipal, request.params.id);
      },
    );
    scope.delete(
      '/project/api/v3/projects/:id/',
      {
        schema: {
          tags: ['projects'],
          description:
            '204; the uploads and results are deleted too. A project that is `WAITING` or `PROCESSING` can be deleted: its processing is canceled ' +
            '(the engine run is stopped within about a second, nothing more is recorded) and the project answers 404 from then on.',
          params: S.IdParams,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await p.remove(request.cloudPrincipal, request.params.id);
        return reply.status(204).send(null);
      },
    );
    scope.get(
      '/project/api/v3/projects/:id/s3_credentials/',
      {
        schema: {
          tags: ['uploads'],
          description:
            'Temporary credentials writing under the project\'s prefix (`key`) and reading its results; a read-only token\'s only read. ' +
            'Also with `?shareToken=` (the project\'s share link) and no bearer token, or one of another organization: read-only credentials ' +
            '(GetObject, HeadObject, listing the prefix and the results; every write 403 AccessDenied), valid 900 s at most. ' +
            'A bearer token of the project\'s own organization gets its own credentials.',
          params: S.IdParams,
          querystring: S.ShareTokenQuery,
          response: { 200: S.StorageCredentials, ...errors },
        },
      },
      async (request) => p.credentials(request.shareGrant ?? request.cloudPrincipal, request.params.id),
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
          description:
            'Body: empty, JSON `{tags, engine}` or a form (urlencoded or multipart) with `tags` (comma-separated or repeated) and `engine`. ' +
            'One pipeline tag at most (`nadir`/`3d-maps` by default, `oblique`, `building`); `flat` only with `nadir` or `3d-maps`. ' +
            `Extension: \`engine\` chooses the photogrammetry engine among those this deployment offers (${deps.engines.names.join(', ')}); ` +
            `without it \`${deps.engines.defaultName}\` runs; any other value is a 400 on \`engine\` listing them. The choice is the project's \`engine\`. ` +
            'Extension: `outputs` (JSON) asks for optional outputs, `{"point_cloud", "mesh", "dsm", "ortho"}` booleans (docs/cloud-service.md). ' +
            '`custom_template_s3_key` (and `custom_template_s3_bucket`): a registered extra holding a PIX4Dmapper template, of which each step\'s runStep is honoured; anything else it sets is a 400 naming it. ' +
            '409 while a GCP or MTP is marked in fewer than two photos.',
          params: S.IdParams,
          body: Type.Optional(S.StartProcessingBody),
          response: { 202: S.ProjectDetails, ...errors },
        },
      },
      async (request, reply) => {
        reply.status(202);
        const template = { key: request.body?.custom_template_s3_key, bucket: request.body?.custom_template_s3_bucket };
        return p.startProcessing(request.cloudPrincipal, request.params.id, request.body?.tags, request.body?.engine, request.body?.outputs, template);
      },
    );
    scope.get(
      '/project/api/v3/projects/:id/outputs/',
      { schema: { tags: ['processing'], description: shareReadable, params: S.IdParams, querystring: S.ShareTokenQuery, response: { 200: S.OutputsResponse, ...errors } } },
      async (request) => p.outputs(request.shareGrant ?? request.cloudPrincipal, request.params.id),
    );

    registerProjectExtrasRoutes(scope, deps.extras);
    registerShareLinkRoutes(scope, deps.shareLinks);

    const b = deps.bundles;
    scope.post(
      '/project/api/v3/projects/:id/inputs/zip/',
      {
        schema: {
          tags: ['processing'],
          summary: 'Request the inputs ZIP (the inputs bundle request_url)',
          description: '202 with the bundle state; building or built bundles are not requested twice. 409 before any input is registered.',
          params: S.IdParams,
          response: { 202: S.BundleState, ...errors },
        },
      },
      async (request, reply) => {
        reply.status(202);
        return b.request(request.cloudPrincipal, request.params.id);
      },
    );
    scope.get(
      '/project/api/v3/projects/:id/inputs/zip/',
      { schema: { tags: ['processing'], summary: 'State of the inputs bundle', params: S.IdParams, response: { 200: S.BundleState, ...errors } } },
      async (request) => b.get(request.cloudPrincipal, request.params.id),
    );

    registerControlPointRoutes(scope, deps.controlPoints);

    const g = deps.groups;
    for (const path of ['/project/api/v3/project-groups/', '/project/api/v3/project_groups/']) {
      const hide = path.includes('_');
      scope.post(path, { schema: { hide, tags: ['project groups'], body: S.CreateProjectGroupBody, response: { 201: S.ProjectGroup, ...errors } } }, async (request, reply) => {
        reply.status(201);
        return g.create(request.cloudPrincipal, request.body);
      });
      scope.get(path, { schema: { hide, tags: ['project groups'], querystring: PageQuery, response: { 200: S.ListOf(S.ProjectGroup), ...errors } } }, async (request) =>
        paginate(await g.list(request.cloudPrincipal), request.query, requestPublicUrl(request)),
      );
      scope.get(`${path}:id/`, { schema: { hide, tags: ['project groups'], params: S.IdParams, response: { 200: S.ProjectGroup, ...errors } } }, async (request) =>
        g.get(request.cloudPrincipal, request.params.id),
      );
      scope.delete(
        `${path}:id/`,
        { schema: { hide, tags: ['project groups'], summary: 'Delete an empty project group', params: S.IdParams, response: { 204: Type.Null(), ...errors } } },
        async (request, reply) => {
          await g.remove(request.cloudPrincipal, request.params.id);
          return reply.status(204).send(null);
        },
      );
    }

    registerCloudWebhookRoutes(scope, deps.webhooks);
    registerCapabilitiesRoute(scope, deps.engines);

    const d = deps.drive;
    scope.get(
      '/common/api/v4/drive/folders/',
      { schema: { tags: ['drive'], summary: 'Folders of the organization', querystring: PageQuery, response: { 200: S.ListOf(S.Folder), ...errors } } },
      async (request) => paginate(await d.listFolders(request.cloudPrincipal), request.query, requestPublicUrl(request)),
    );
    scope.post(
      '/common/api/v4/drive/folders/',
      { schema: { tags: ['drive'], summary: 'Create a folder (a target of moves)', body: S.CreateFolderBody, response: { 201: S.Folder, ...errors } } },
      async (request, reply) => {
        reply.status(201);
        return d.createFolder(request.cloudPrincipal, request.body);
      },
    );
    scope.put(
      '/common/api/v4/drive/move_batch/',
      {
        schema: {
          tags: ['drive'],
          summary: 'Move projects to a project group, the organization root or a folder',
          description: 'All or nothing. Sources, target and owner_uuid must belong to the caller\'s organization (404 otherwise).',
          body: S.MoveBatchBody,
          response: { 200: S.MoveBatchResult, ...errors },
        },
      },
      async (request) => d.moveBatch(request.cloudPrincipal, request.body),
    );
  });
}

/** Routes that take a multipart form; any other answers 415 to one (CONTRACT §1). */
const MULTIPART_ROUTES = new Set(['/oauth2/token/', '/project/api/v3/projects/:id/start_processing/']);

/**
 * A multipart body's fields, as a urlencoded form gives them (a repeated field: an array). A
 * broken body (no boundary, truncated, malformed part) is the client's: 400, never 500.
 */
async function multipartFields(request: FastifyRequest): Promise<Record<string, string | string[]>> {
  if (!MULTIPART_ROUTES.has(request.routeOptions.url ?? '')) {
    throw new ApiError(415, 'unsupported_media_type', 'multipart/form-data is not accepted here; send JSON.');
  }
  const fields: Record<string, string | string[]> = Object.create(null);
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') throw new ApiError(400, 'parse_error', `Multipart parse error: file parts are not accepted ("${part.fieldname}").`);
      const value = String(part.value);
      const existing = fields[part.fieldname];
      fields[part.fieldname] = existing === undefined ? value : [...[existing].flat(), value];
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 413) throw new ApiError(413, 'too_large', 'The multipart body has too many parts or fields.');
    throw new ApiError(400, 'parse_error', `Multipart parse error: ${(err as Error).message || 'malformed body'}.`);
  }
  return { ...fields };
}
