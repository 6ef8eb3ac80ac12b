// Webhook subscriptions (not in the spec; issue 30 §2): POST/GET /v1/webhooks/,
// GET/PATCH/DELETE /v1/webhooks/{id}/, GET /v1/webhooks/{id}/deliveries/ (webhook.service.ts).
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { WebhookService } from './webhook.service.ts';
import { ListOf, respondList } from '../http/lists.ts';
import { Type } from 'typebox';
import { createWebhookBody, DeliverySchema as Delivery, NewWebhookSchema, UpdateWebhookBody, WebhookSchema } from '../../infra/webhooks/webhook-schemas.ts';
import { INSPECTION_WEBHOOK_EVENTS } from './webhook-events.ts';
import * as S from '../inspection.schemas.ts';

const tags = ['webhooks'];

const CreateBody = createWebhookBody(INSPECTION_WEBHOOK_EVENTS);

// The inspection service's subscriptions name their creator: removing a member from an
// organization deletes the webhooks they made for it (auth/membership-removal.ts).
const CreatedBy = Type.Object(
  { id: Type.Integer(), username: Type.String() },
  { description: 'The user who made the subscription; removing them from the organization deletes it' },
);
const Webhook = Type.Object({ ...WebhookSchema.properties, created_by: CreatedBy });
const NewWebhook = Type.Object({ ...NewWebhookSchema.properties, created_by: CreatedBy });

export function registerWebhookRoutes(r: HttpServer, deps: { webhooks: WebhookService }): void {
  r.post(
    '/v1/webhooks/',
    {
      schema: {
        tags,
        summary: 'Subscribe a receiver to events of the account (organization, or the user without one)',
        description: 'Deliveries follow Standard Webhooks (docs/inspection-service.md, "Webhooks"). The answer holds the secret, once.',
        headers: S.AuthHeaders,
        body: CreateBody,
        response: { 201: NewWebhook, ...S.errorResponses },
      },
    },
    async (request, reply) => {
      const created = await deps.webhooks.create(request.auth, request.body.url, request.body.events);
      reply.status(201);
      return created;
    },
  );
  r.get(
    '/v1/webhooks/',
    { schema: { tags, summary: "The account's webhooks (never their secrets)", headers: S.AuthHeaders, querystring: S.PageQuery, response: { 200: ListOf(Webhook), ...S.errorResponses } } },
    async (request) => respondList(request, request.query, await deps.webhooks.list(request.auth)),
  );
  r.get(
    '/v1/webhooks/:id/',
    { schema: { tags, summary: 'A webhook (never its secret)', headers: S.AuthHeaders, params: S.IdParams, response: { 200: Webhook, ...S.errorResponses } } },
    async (request) => deps.webhooks.get(request.auth, request.params.id),
  );
  r.patch(
    '/v1/webhooks/:id/',
    {
      schema: {
        tags,
        summary: 'Enable a disabled webhook again ({"enabled": true}), or disable one ({"enabled": false})',
        description: 'Enabling clears disabled_at, disabled_reason and the count of failed events; the events that follow are delivered, those of the time it was disabled are not.',
        headers: S.AuthHeaders,
        params: S.IdParams,
        body: UpdateWebhookBody,
        response: { 200: Webhook, ...S.errorResponses },
      },
    },
    async (request) => deps.webhooks.setEnabled(request.auth, request.params.id, request.body.enabled),
  );
  r.delete(
    '/v1/webhooks/:id/',
    { schema: { tags, summary: 'Delete a webhook and its delivery log; nothing more is sent to it', headers: S.AuthHeaders, params: S.IdParams, response: { 204: S.NoContent, ...S.errorResponses } } },
    async (request, reply) => {
      await deps.webhooks.remove(request.auth, request.params.id);
      return reply.status(204).send(null);
    },
  );
  r.get(
    '/v1/webhooks/:id/deliveries/',
    {
      schema: {
        tags,
        summary: 'Delivery log: every attempt, newest first (the last 1000)',
        headers: S.AuthHeaders,
        params: S.IdParams,
        querystring: S.PageQuery,
        response: { 200: ListOf(Delivery), ...S.errorResponses },
      },
    },
    async (request) => respondList(request, request.query, await deps.webhooks.deliveries(request.auth, request.params.id)),
  );
}
