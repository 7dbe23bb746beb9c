import { Layer } from "effect"
import { WebhookDeliveryLive, WebhookDeliverySettingsLive } from "./webhookDelivery.ts"

export { WebhookEndpointsLive } from "./webhookEndpoints.ts"

/** The outbox's delivery worker with its settings, in processes that serve. */
export const WebhookDeliveryAreaLive = WebhookDeliveryLive.pipe(Layer.provide(WebhookDeliverySettingsLive))
