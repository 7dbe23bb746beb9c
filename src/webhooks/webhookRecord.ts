import { Schema } from "effect"
import { JsonObject, Timestamp } from "../domain/wireTypes.ts"

export const WebhookEventType = Schema.Literal(
  "run.completed",
  "campaign.started",
  "campaign.paused",
  "campaign.completed",
  "call.voicemail",
  "call.transfer"
)
export type WebhookEventType = typeof WebhookEventType.Type
export const webhookEventTypes: ReadonlyArray<WebhookEventType> = WebhookEventType.literals

/** An organization's webhook endpoint; its secret is shown only when created or rotated. */
export const WebhookEndpoint = Schema.Struct({
  id: Schema.Int,
  url: Schema.String,
  description: Schema.NullOr(Schema.String),
  event_types: Schema.Array(WebhookEventType),
  enabled: Schema.Boolean,
  disabled_reason: Schema.NullOr(Schema.String).annotations({
    description: "Why the endpoint was disabled: every delivery failed for 24 hours. Re-enable it with PATCH."
  }),
  disabled_at: Schema.NullOr(Timestamp),
  failing_since: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "WebhookEndpoint" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

export const WebhookEndpointWithSecret = Schema.Struct({
  ...WebhookEndpoint.fields,
  secret: Schema.String.annotations({
    description:
      "The signing secret (whsec_…): shown in this response only. Verify signatures with any Standard Webhooks library."
  })
}).annotations({ identifier: "WebhookEndpointWithSecret" })

export const WebhookDeliveryAttempt = Schema.Struct({
  attempted_at: Timestamp,
  status: Schema.NullOr(Schema.Int).annotations({ description: "The receiver's HTTP status; null when none came" }),
  latency_ms: Schema.Int,
  error: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookDeliveryAttempt" })

export const WebhookDelivery = Schema.Struct({
  id: Schema.Int,
  message_id: Schema.String.annotations({ description: "The `webhook-id` header: the same on every retry" }),
  event_type: WebhookEventType,
  state: Schema.Literal("pending", "delivered", "failed"),
  attempts: Schema.Int,
  next_attempt_at: Schema.NullOr(Timestamp),
  delivered_at: Schema.NullOr(Timestamp),
  last_status: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  payload: Schema.NullOr(JsonObject),
  attempt_log: Schema.Array(WebhookDeliveryAttempt)
}).annotations({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

/**
 * A message of an agent's webhook node (Dograh's `webhook` node) for one finished run: the node's
 * request as it was when the run finished, the body rendered from its template, and its attempts.
 */
export const WebhookNodeDelivery = Schema.Struct({
  id: Schema.Int,
  delivery_id: Schema.String.annotations({ description: "The `X-Dograh-Delivery-Id` header: the same on every retry" }),
  workflow_run_id: Schema.NullOr(Schema.Int),
  node_id: Schema.String,
  node_name: Schema.NullOr(Schema.String),
  endpoint_url: Schema.String,
  http_method: Schema.String,
  state: Schema.Literal("pending", "delivered", "failed"),
  attempts: Schema.Int,
  next_attempt_at: Schema.NullOr(Timestamp),
  delivered_at: Schema.NullOr(Timestamp),
  last_status: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  payload: Schema.Unknown.annotations({ description: "The body sent (null until the first attempt rendered it)" }),
  attempt_log: Schema.Array(WebhookDeliveryAttempt)
}).annotations({ identifier: "WebhookNodeDelivery" })
export type WebhookNodeDelivery = typeof WebhookNodeDelivery.Type

/** The `X-Dograh-Delivery-Id` of a webhook node's message. */
export const nodeDeliveryId = (deliveryId: number) => `whn_${deliveryId}`

/** The `webhook-id` of an event's message: one per event, the same to every endpoint and on every retry. */
export const messageId = (eventId: number) => `msg_${eventId}`
