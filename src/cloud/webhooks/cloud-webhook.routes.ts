// Webhook subscriptions of the cloud service (not in the cloud spec; issue 30 §2), in the style of
// its project routes: POST/GET /project/api/v3/webhooks/, GET/PATCH/DELETE /project/api/v3/webhooks/{id}/,
// GET /project/api/v3/webhooks/{id}/deliveries/ (docs/cloud-service.md, "Webhooks").
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { CloudWebhookService } from './cloud-webhooks.ts';
import { PageQuery, paginate } from '../common/pagination.ts';
import { requestPublicUrl } from '../../infra/http/http-edge.ts';
import { Id } from '../../shared/schemas/limits.ts';
import { createWebhookBody, DeliverySchema, NewWebhookSchema, UpdateWebhookBody, WebhookSchema } from '../../infra/webhooks/webhook-schemas.ts';
import { CLOUD_WEBHOOK_EVENTS } from './cloud-webhooks.ts';
import * as S from '../cloud.schemas.ts';

const tags = ['webhooks'];
const errors = { 400: S.FieldErrorsBody, 401: S.ErrorBody, 403: S.ErrorBody, 404: S.ErrorBody };
const Params = Type.Object({ id: Id() });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function registerCloudWebhookRoutes(scope: FastifyInstance<any, any, any, any, TypeBoxTypeProvider>, webhooks: CloudWebhookService): void {
  scope.post(
    '/project/api/v3/webhooks/',
    {
      schema: {
        tags,
        summary: "Subscribe a receiver to the organization's project events (Standard Webhooks; the secret is in this answer only)",
        body: createWebhookBody(CLOUD_WEBHOOK_EVENTS),
        response: { 201: NewWebhookSchema, ...errors },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return webhooks.create(request.cloudPrincipal, request.body.url, request.body.events);
    },
  );
  scope.get(
    '/project/api/v3/webhooks/',
    { schema: { tags, summary: "The organization's webhooks (never their secrets)", querystring: PageQuery, response: { 200: S.ListOf(WebhookSchema), ...errors } } },
    async (request) => paginate(await webhooks.list(request.cloudPrincipal), request.query, requestPublicUrl(request)),
  );
  scope.get('/project/api/v3/webhooks/:id/', { schema: { tags, params: Params, response: { 200: WebhookSchema, ...errors } } }, async (request) =>
    webhooks.get(request.cloudPrincipal, request.params.id),
  );
  scope.patch(
    '/project/api/v3/webhooks/:id/',
    {
      schema: {
        tags,
        summary: 'Enable a disabled webhook again ({"enabled": true}), or disable one ({"enabled": false})',
        description: 'Enabling clears disabled_at, disabled_reason and the count of failed events; the events that follow are delivered, those of the time it was disabled are not.',
        params: Params,
        body: UpdateWebhookBody,
        response: { 200: WebhookSchema, ...errors },
      },
    },
    async (request) => webhooks.setEnabled(request.cloudPrincipal, request.params.id, request.body.enabled),
  );
  scope.delete('/project/api/v3/webhooks/:id/', { schema: { tags, params: Params, response: { 204: Type.Null(), ...errors } } }, async (request, reply) => {
    await webhooks.remove(request.cloudPrincipal, request.params.id);
    return reply.status(204).send(null);
  });
  scope.get(
    '/project/api/v3/webhooks/:id/deliveries/',
    { schema: { tags, summary: 'Delivery log: every attempt, newest first (the last 1000)', params: Params, querystring: PageQuery, response: { 200: S.ListOf(DeliverySchema), ...errors } } },
    async (request) => paginate(await webhooks.deliveries(request.cloudPrincipal, request.params.id), request.query, requestPublicUrl(request)),
  );
}
