import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EmptyObject } from "../../../src/domain/wireTypes.ts"
import {
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEventType,
  WebhookNodeDelivery
} from "../../../src/webhooks/webhookRecord.ts"
import { HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { bodySchema, IdFromPath, IntFromString, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

const Url = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048))
const Description = Schema.NullOr(Schema.String.pipe(Schema.maxLength(500)))
const EventTypes = Schema.Array(WebhookEventType).pipe(Schema.minItems(1))

export const CreateWebhookEndpointRequest = bodySchema("CreateWebhookEndpoint", {
  url: Url,
  description: Schema.optional(Description),
  event_types: Schema.optional(EventTypes).annotations({ description: "Every event type when omitted" })
})

export const UpdateWebhookEndpointRequest = bodySchema("UpdateWebhookEndpoint", {
  url: Schema.optional(Url),
  description: Schema.optional(Description),
  event_types: Schema.optional(EventTypes),
  enabled: Schema.optional(Schema.Boolean)
})

const EndpointPath = pathSchema("WebhookEndpoint", { endpoint_id: IdFromPath })
const DeliveryPath = pathSchema("WebhookDelivery", { endpoint_id: IdFromPath, delivery_id: IdFromPath })
const DeliveriesQuery = querySchema("WebhookDeliveries", {
  page: Schema.optionalWith(IntFromString({ minimum: 1, description: "Page number (default 1)" }), {
    default: () => 1
  }),
  limit: Schema.optionalWith(IntFromString({ minimum: 1, maximum: 100, description: "Items per page (default 20)" }), {
    default: () => 20
  })
})

const AgentDeliveriesPath = pathSchema("WebhookNodeDeliveries", { workflow_id: IdFromPath })
const AgentDeliveryPath = pathSchema("WebhookNodeDelivery", { workflow_id: IdFromPath, delivery_id: IdFromPath })

export const WebhookNodeDeliveryListResponse = Schema.Struct({
  deliveries: Schema.Array(WebhookNodeDelivery),
  total_count: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int
})

export const WebhookEndpointListResponse = Schema.Struct({ endpoints: Schema.Array(WebhookEndpoint) })
export const WebhookDeliveryListResponse = Schema.Struct({
  deliveries: Schema.Array(WebhookDelivery),
  total_count: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int
})

/** An organization's outgoing webhooks: managed by admins (an API key needs `webhooks:write`). */
export const WebhooksApi = HttpApiGroup.make("webhooks")
  .annotate(
    OpenApi.Description,
    "Outgoing webhooks: endpoints that receive `run.completed`, `call.voicemail`, `call.transfer` and `campaign.started|paused|completed` events, signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). Admins only; API keys need `webhooks:write`."
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/webhooks")
      .annotate(OpenApi.Summary, "List webhook endpoints")
      .annotate(OpenApi.Description, "The organization's endpoints, with whether each is enabled and, if not, why.")
      .addSuccess(WebhookEndpointListResponse)
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/webhooks")
      .annotate(OpenApi.Summary, "Create a webhook endpoint")
      .annotate(
        OpenApi.Description,
        "The signing secret is in this response only; keep it. The URL's address must be allowed by the outbound policy (TALKGRAPH_OUTBOUND_ALLOW, `webhooks:` entries)."
      )
      .setPayload(CreateWebhookEndpointRequest)
      .addSuccess(WebhookEndpointWithSecret)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/webhooks/:endpoint_id")
      .annotate(OpenApi.Summary, "Get a webhook endpoint")
      .annotate(OpenApi.Description, "One endpoint; its secret is never shown again after creation or rotation.")
      .setPath(EndpointPath)
      .addSuccess(WebhookEndpoint)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.patch("update", "/api/v1/webhooks/:endpoint_id")
      .annotate(OpenApi.Summary, "Update a webhook endpoint")
      .annotate(OpenApi.Description, "`enabled: true` re-enables an endpoint disabled after 24 hours of failures.")
      .setPath(EndpointPath)
      .setPayload(UpdateWebhookEndpointRequest)
      .addSuccess(WebhookEndpoint)
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.del("remove", "/api/v1/webhooks/:endpoint_id")
      .annotate(OpenApi.Summary, "Delete a webhook endpoint")
      .annotate(OpenApi.Description, "Removes the endpoint with its pending deliveries and its delivery log.")
      .setPath(EndpointPath)
      .addSuccess(EmptyObject)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/api/v1/webhooks/:endpoint_id/rotate-secret")
      .annotate(OpenApi.Summary, "Rotate the signing secret")
      .annotate(
        OpenApi.Description,
        "The new secret is in this response only. For 24 hours messages carry a signature with each secret, so a receiver verifies with either while it switches over."
      )
      .setPath(EndpointPath)
      .addSuccess(WebhookEndpointWithSecret)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/api/v1/webhooks/:endpoint_id/deliveries")
      .annotate(OpenApi.Summary, "List an endpoint's deliveries")
      .annotate(OpenApi.Description, "Newest first, each with its attempts: the receiver's status and the latency.")
      .setPath(EndpointPath)
      .setUrlParams(DeliveriesQuery)
      .addSuccess(WebhookDeliveryListResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/api/v1/webhooks/:endpoint_id/deliveries/:delivery_id/redeliver")
      .annotate(OpenApi.Summary, "Redeliver")
      .annotate(
        OpenApi.Description,
        "Sends the message again from now (same webhook-id), with a fresh 24-hour retry window."
      )
      .setPath(DeliveryPath)
      .addSuccess(WebhookDelivery)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.get("nodeDeliveries", "/api/v1/workflow/:workflow_id/webhook-deliveries")
      .annotate(OpenApi.Summary, "List an agent's webhook-node deliveries")
      .annotate(
        OpenApi.Description,
        "The messages the agent's `webhook` nodes sent after its finished runs, newest first: the node's request, the rendered body and each attempt (status, latency)."
      )
      .setPath(AgentDeliveriesPath)
      .setUrlParams(DeliveriesQuery)
      .addSuccess(WebhookNodeDeliveryListResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("redeliverNode", "/api/v1/workflow/:workflow_id/webhook-deliveries/:delivery_id/redeliver")
      .annotate(OpenApi.Summary, "Redeliver a webhook-node message")
      .annotate(OpenApi.Description, "Sends the same body again from now, with a fresh 24-hour retry window.")
      .setPath(AgentDeliveryPath)
      .addSuccess(WebhookNodeDelivery)
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
