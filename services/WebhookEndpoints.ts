import { Context, type Effect } from "effect"
import type { Forbidden, NotFound, ValidationFailed } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type {
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEventType,
  WebhookNodeDelivery
} from "../src/webhooks/webhookRecord.ts"

export interface WebhookEndpointInput {
  readonly url: string
  readonly description?: string | null | undefined
  /** All event types when omitted. */
  readonly event_types?: ReadonlyArray<WebhookEventType> | undefined
}

export interface WebhookEndpointPatch {
  readonly url?: string | undefined
  readonly description?: string | null | undefined
  readonly event_types?: ReadonlyArray<WebhookEventType> | undefined
  /** Re-enables an endpoint disabled after a day of failures (or disables one). */
  readonly enabled?: boolean | undefined
}

export type WithSecret = WebhookEndpoint & { readonly secret: string }

/**
 * An organization's webhook endpoints, their delivery log and redelivery. Every operation is
 * scoped to the caller's organization; the signing secret is returned only by `create` and
 * `rotateSecret`.
 */
export interface WebhookEndpointsShape {
  readonly list: (principal: Principal) => Effect.Effect<ReadonlyArray<WebhookEndpoint>>
  readonly get: (principal: Principal, id: number) => Effect.Effect<WebhookEndpoint, NotFound>
  readonly create: (principal: Principal, input: WebhookEndpointInput) => Effect.Effect<WithSecret, ValidationFailed>
  readonly update: (
    principal: Principal,
    id: number,
    patch: WebhookEndpointPatch
  ) => Effect.Effect<WebhookEndpoint, NotFound | ValidationFailed>
  readonly remove: (principal: Principal, id: number) => Effect.Effect<void, NotFound>
  readonly rotateSecret: (principal: Principal, id: number) => Effect.Effect<WithSecret, NotFound>
  /** The endpoint's deliveries, newest first, each with its attempts (status, latency). */
  readonly deliveries: (
    principal: Principal,
    id: number,
    page: number,
    pageSize: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<WebhookDelivery>; readonly total: number }, NotFound>
  /** Sends a delivery again from now, with a fresh 24-hour retry window (same `webhook-id`). */
  readonly redeliver: (
    principal: Principal,
    id: number,
    deliveryId: number
  ) => Effect.Effect<WebhookDelivery, NotFound | Forbidden>
  /** The messages of an agent's webhook nodes, newest first, each with its attempts. */
  readonly nodeDeliveries: (
    principal: Principal,
    workflowId: number,
    page: number,
    pageSize: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<WebhookNodeDelivery>; readonly total: number }, NotFound>
  /** Sends a node's message again from now (the same body), with a fresh 24-hour retry window. */
  readonly redeliverNode: (
    principal: Principal,
    workflowId: number,
    deliveryId: number
  ) => Effect.Effect<WebhookNodeDelivery, NotFound>
}

export class WebhookEndpoints
  extends Context.Tag("talkgraph/WebhookEndpoints")<WebhookEndpoints, WebhookEndpointsShape>()
{}
