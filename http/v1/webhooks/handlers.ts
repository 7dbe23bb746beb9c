import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WebhookEndpoints } from "../../../services/WebhookEndpoints.ts"
import { Api } from "../../api.ts"
import { requireRole, requireScope } from "../../security.ts"

const admin = Effect.zipRight(requireScope("webhooks:write"), requireRole("admin"))

/** A page of deliveries in the log's shape. */
const deliveryPage =
  (asked: { readonly page: number; readonly limit: number }) =>
  <Item>({ items, total }: { readonly items: ReadonlyArray<Item>; readonly total: number }) => ({
    deliveries: items,
    total_count: total,
    page: asked.page,
    limit: asked.limit
  })

export const WebhooksHandlers = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* WebhookEndpoints
    return handlers
      .handle("list", () =>
        Effect.flatMap(admin, (principal) =>
          webhooks.list(principal)).pipe(Effect.map((endpoints) => ({ endpoints }))))
      .handle("create", ({ payload }) =>
        Effect.flatMap(admin, (principal) => webhooks.create(principal, payload)))
      .handle("get", ({ path }) => Effect.flatMap(admin, (principal) => webhooks.get(principal, path.endpoint_id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(admin, (principal) =>
          webhooks.update(principal, path.endpoint_id, payload)))
      .handle("remove", ({ path }) =>
        Effect.flatMap(admin, (principal) =>
          webhooks.remove(principal, path.endpoint_id)).pipe(Effect.as({})))
      .handle("rotateSecret", ({ path }) =>
        Effect.flatMap(admin, (principal) =>
          webhooks.rotateSecret(principal, path.endpoint_id)))
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.flatMap(admin, (principal) =>
          webhooks.deliveries(principal, path.endpoint_id, urlParams.page, urlParams.limit)).pipe(
            Effect.map(deliveryPage(urlParams))
          ))
      .handle("redeliver", ({ path }) =>
        Effect.flatMap(admin, (principal) =>
          webhooks.redeliver(principal, path.endpoint_id, path.delivery_id)))
      .handle("nodeDeliveries", ({ path, urlParams }) =>
        Effect.flatMap(admin, (principal) =>
          webhooks.nodeDeliveries(principal, path.workflow_id, urlParams.page, urlParams.limit)).pipe(
            Effect.map(deliveryPage(urlParams))
          ))
      .handle("redeliverNode", ({ path }) =>
        Effect.flatMap(admin, (principal) =>
          webhooks.redeliverNode(principal, path.workflow_id, path.delivery_id)))
  }))
