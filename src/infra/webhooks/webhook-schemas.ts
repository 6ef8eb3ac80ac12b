// TypeBox schemas of webhook subscriptions and their delivery log, shared by both services' routes.
import { Type } from 'typebox';
import { MAX_URL_LENGTH } from './outbound.ts';

export const WebhookSchema = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  active: Type.Boolean({ description: 'false once disabled after repeated failed deliveries (or by its owner); PATCH {"enabled": true} enables it again' }),
  disabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
});

export const NewWebhookSchema = Type.Object({
  ...WebhookSchema.properties,
  secret: Type.String({ description: 'The signing secret (`whsec_…`, Standard Webhooks): in this answer only, never again' }),
});

/** The body of a subscription: a receiver URL and some of `events`. */
export function createWebhookBody(events: readonly string[]) {
  return Type.Object(
    {
      url: Type.String({
        minLength: 1,
        maxLength: MAX_URL_LENGTH,
        description: 'http or https URL of the receiver; private, loopback, link-local and unique-local addresses are refused unless WEBHOOK_ALLOW_PRIVATE_ADDRESSES',
      }),
      events: Type.Array(Type.Union(events.map((e) => Type.Literal(e))), { minItems: 1, maxItems: events.length, uniqueItems: true }),
    },
    { additionalProperties: false },
  );
}

/** The body of PATCH …/webhooks/{id}/: enable a disabled subscription again, or disable one. */
export const UpdateWebhookBody = Type.Object(
  {
    enabled: Type.Boolean({
      description:
        'true: deliver events again (clears disabled_at, disabled_reason and the count of failed events; events of the time it was disabled are not sent); false: stop delivering (disabled_reason "Disabled by its owner.")',
    }),
  },
  { additionalProperties: false },
);

export const DeliverySchema = Type.Object({
  id: Type.Integer(),
  at: Type.String({ format: 'date-time', description: 'When the attempt was made' }),
  event: Type.String(),
  message_id: Type.String({ description: 'The `webhook-id` header sent (the same for every attempt of one event)' }),
  attempt: Type.Integer({ description: '1 for the first attempt of the event' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's answer; null when there was none (see error)" }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why no answer was had: refused address, DNS, connection, timeout' }),
  succeeded: Type.Boolean(),
});
