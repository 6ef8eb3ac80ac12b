// Webhook subscriptions (not in the spec; issue 30 §2): POST/GET /v1/webhooks/,
// GET/DELETE /v1/webhooks/{id}/, GET /v1/webhooks/{id}/deliveries/ (webhook.service.ts).
import { Type } from 'typebox';
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { WebhookService } from './webhook.service.ts';
import { ListOf, respondList } from '../http/lists.ts';
import { MAX_URL_LENGTH } from '../../infra/webhooks/outbound.ts';
import { INSPECTION_WEBHOOK_EVENTS } from './webhook-events.ts';
import * as S from '../inspection.schemas.ts';

const tags = ['webhooks'];

const Webhook = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  active: Type.Boolean({ description: 'false once disabled after repeated failed deliveries' }),
  disabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
});
const NewWebhook = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'The signing secret (`whsec_…`, Standard Webhooks): in this answer only, never again' }),
});
const CreateBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'http or https URL of the receiver; private, loopback, link-local and unique-local addresses are refused unless WEBHOOK_ALLOW_PRIVATE_ADDRESSES' }),
    events: Type.Array(Type.Union(INSPECTION_WEBHOOK_EVENTS.map((e) => Type.Literal(e))), { minItems: 1, maxItems: INSPECTION_WEBHOOK_EVENTS.length, uniqueItems: true }),
  },
  { additionalProperties: false },
);
const Delivery = Type.Object({
  id: Type.Integer(),
  at: Type.String({ format: 'date-time', description: 'When the attempt was made' }),
  event: Type.String(),
  message_id: Type.String({ description: 'The `webhook-id` header sent (the same for every attempt of one event)' }),
  attempt: Type.Integer({ description: '1 for the first attempt of the event' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's answer; null when there was none (see error)" }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why no answer was had: refused address, DNS, connection, timeout' }),
  succeeded: Type.Boolean(),
});

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
