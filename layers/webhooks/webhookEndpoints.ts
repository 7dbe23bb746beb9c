import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import * as crypto from "node:crypto"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import {
  type WebhookEndpointInput,
  type WebhookEndpointPatch,
  WebhookEndpoints
} from "../../services/WebhookEndpoints.ts"
import { NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { secretFromBytes } from "../../src/webhooks/standardWebhooks.ts"
import { type WebhookEndpoint, webhookEventTypes } from "../../src/webhooks/webhookRecord.ts"
import { deliveryView, makeWebhookRows, nodeDeliveryView } from "./webhookRows.ts"

const endpointView = (row: WebhookEndpoint): WebhookEndpoint => ({
  id: Number(row.id),
  url: row.url,
  description: row.description,
  event_types: row.event_types,
  enabled: row.enabled,
  disabled_reason: row.disabled_reason,
  disabled_at: row.disabled_at,
  failing_since: row.failing_since,
  created_at: row.created_at,
  updated_at: row.updated_at
})

/** The form a receiver's URL must have; the outbound policy then decides whether its address may be reached. */
const urlProblem = (value: string): string | null => {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return "must be an absolute http(s) URL, e.g. https://crm.example.com/hooks/talkgraph"
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http(s) URL"
  if (url.username !== "" || url.password !== "") return "must not carry credentials (user:password@)"
  return null
}

export const WebhookEndpointsLive = Layer.effect(
  WebhookEndpoints,
  Effect.gen(function*() {
    const secrets = yield* SecretBox
    const outbound = yield* OutboundHttp
    const rows = yield* makeWebhookRows
    const sql = yield* SqlClient.SqlClient

    const checkedUrl = (url: string) =>
      Effect.gen(function*() {
        const problem = urlProblem(url)
        if (problem !== null) return yield* ValidationFailed.single(["body", "url"], `url ${problem}`)
        // The policy checks the address (literal, or what the name resolves to now and at every connection).
        const parsed = new URL(url)
        const refusal = yield* outbound.refusal("webhook", `${parsed.protocol}//${parsed.host}`)
        if (Option.isSome(refusal)) {
          return yield* ValidationFailed.single(["body", "url"], `url cannot be reached: ${refusal.value}`)
        }
        return url
      })

    const owned = (principal: Principal, id: number) =>
      Effect.flatMap(
        rows.endpoint(principal.organizationId, id),
        (row) => row ? Effect.succeed(row) : Effect.fail(new NotFound({ resource: "Webhook endpoint", id }))
      )

    const newSecret = () => secretFromBytes(crypto.randomBytes(32))

    const list = Effect.fn("WebhookEndpoints.list")(function*(principal: Principal) {
      return (yield* rows.endpoints(principal.organizationId)).map(endpointView)
    }, Effect.orDie)

    const get = Effect.fn("WebhookEndpoints.get")(
      function*(principal: Principal, id: number) {
        return endpointView(yield* owned(principal, id))
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const create = Effect.fn("WebhookEndpoints.create")(
      function*(principal: Principal, input: WebhookEndpointInput) {
        const url = yield* checkedUrl(input.url)
        const secret = newSecret()
        const now = new Date(yield* Clock.currentTimeMillis)
        const row = yield* rows.insertEndpoint({
          organizationId: principal.organizationId,
          url,
          description: input.description ?? null,
          eventTypes: input.event_types ?? webhookEventTypes,
          sealedSecret: secrets.encrypt(secret),
          now
        })
        return { ...endpointView(row), secret }
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const update = Effect.fn("WebhookEndpoints.update")(
      function*(principal: Principal, id: number, patch: WebhookEndpointPatch) {
        const current = yield* owned(principal, id)
        const url = patch.url === undefined ? current.url : yield* checkedUrl(patch.url)
        const enabled = patch.enabled ?? current.enabled
        const row = yield* rows.updateEndpoint(principal.organizationId, id, {
          url,
          description: patch.description === undefined ? current.description : patch.description,
          eventTypes: patch.event_types ?? current.event_types,
          enabled,
          // Re-enabling starts afresh: the day of failures that disabled it is over.
          reenabled: enabled && !current.enabled,
          now: new Date(yield* Clock.currentTimeMillis)
        })
        return endpointView(row!)
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const remove = Effect.fn("WebhookEndpoints.remove")(
      function*(principal: Principal, id: number) {
        yield* owned(principal, id)
        yield* rows.deleteEndpoint(principal.organizationId, id)
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const rotateSecret = Effect.fn("WebhookEndpoints.rotateSecret")(
      function*(principal: Principal, id: number) {
        yield* owned(principal, id)
        const secret = newSecret()
        const row = yield* rows.replaceSecret(
          principal.organizationId,
          id,
          secrets.encrypt(secret),
          new Date(yield* Clock.currentTimeMillis)
        )
        return { ...endpointView(row!), secret }
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const deliveries = Effect.fn("WebhookEndpoints.deliveries")(
      function*(principal: Principal, id: number, page: number, pageSize: number) {
        yield* owned(principal, id)
        const { items, total } = yield* rows.deliveries(id, pageSize, (page - 1) * pageSize)
        return { items: items.map(deliveryView), total }
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const redeliver = Effect.fn("WebhookEndpoints.redeliver")(
      function*(principal: Principal, id: number, deliveryId: number) {
        yield* owned(principal, id)
        const row = yield* rows.requeue(id, deliveryId, yield* Clock.currentTimeMillis)
        if (!row) return yield* new NotFound({ resource: "Webhook delivery", id: deliveryId })
        return deliveryView(row)
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    /** The organization's agent; another organization's is as unknown as a made-up id. */
    const ownedAgent = (principal: Principal, workflowId: number) =>
      Effect.flatMap(
        sql<
          { id: number }
        >`SELECT id FROM workflows WHERE id = ${workflowId} AND organization_id = ${principal.organizationId}`,
        (found) =>
          found.length === 0 ? Effect.fail(new NotFound({ resource: "Workflow", id: workflowId })) : Effect.void
      )

    const nodeDeliveries = Effect.fn("WebhookEndpoints.nodeDeliveries")(
      function*(principal: Principal, workflowId: number, page: number, pageSize: number) {
        yield* ownedAgent(principal, workflowId)
        const { items, total } = yield* rows.nodeDeliveries(workflowId, pageSize, (page - 1) * pageSize)
        return { items: items.map(nodeDeliveryView), total }
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const redeliverNode = Effect.fn("WebhookEndpoints.redeliverNode")(
      function*(principal: Principal, workflowId: number, deliveryId: number) {
        yield* ownedAgent(principal, workflowId)
        const row = yield* rows.requeueNode(workflowId, deliveryId, yield* Clock.currentTimeMillis)
        if (!row) return yield* new NotFound({ resource: "Webhook delivery", id: deliveryId })
        return nodeDeliveryView(row)
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    return WebhookEndpoints.of({
      list,
      get,
      create,
      update,
      remove,
      rotateSecret,
      deliveries,
      redeliver,
      nodeDeliveries,
      redeliverNode
    })
  })
)
