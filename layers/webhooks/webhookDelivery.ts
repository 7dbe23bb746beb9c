import { HttpClientRequest } from "@effect/platform"
import { Clock, Config, Context, Effect, Layer } from "effect"
import { InvalidConfiguration } from "../../services/AppConfig.ts"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { afterFailure, retryDefaults, type RetrySettings, shouldDisable } from "../../src/webhooks/retrySchedule.ts"
import { signedHeaders } from "../../src/webhooks/standardWebhooks.ts"
import { messageId } from "../../src/webhooks/webhookRecord.ts"
import { readBoundedReply } from "../outbound/replyBody.ts"
import { makeWebhookPayloads } from "./webhookPayloads.ts"
import { type ClaimedDelivery, makeWebhookRows } from "./webhookRows.ts"

export interface WebhookDeliverySettingsShape {
  /** How often the outbox is looked at for due deliveries. */
  readonly pollMillis: number
  readonly retry: RetrySettings
  /** A receiver that has not answered by then has failed this attempt. */
  readonly timeoutMillis: number
  /** Deliveries sent at once by this process. */
  readonly concurrency: number
}

export class WebhookDeliverySettings extends Context.Tag("talkgraph/WebhookDeliverySettings")<
  WebhookDeliverySettings,
  WebhookDeliverySettingsShape
>() {}

export const WebhookDeliverySettingsLive = Layer.effect(
  WebhookDeliverySettings,
  Config.all({
    pollMillis: Config.integer("TALKGRAPH_WEBHOOK_POLL_MS").pipe(Config.withDefault(250)),
    baseMs: Config.integer("TALKGRAPH_WEBHOOK_RETRY_BASE_MS").pipe(Config.withDefault(retryDefaults.baseMs)),
    timeoutMillis: Config.integer("TALKGRAPH_WEBHOOK_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
    concurrency: Config.integer("TALKGRAPH_WEBHOOK_CONCURRENCY").pipe(Config.withDefault(16))
  }).pipe(
    Effect.map(({ baseMs, concurrency, pollMillis, timeoutMillis }) => ({
      pollMillis: Math.max(10, pollMillis),
      retry: { baseMs: Math.max(1, baseMs), capMs: retryDefaults.capMs },
      timeoutMillis: Math.max(100, timeoutMillis),
      concurrency: Math.max(1, concurrency)
    })),
    Effect.mapError((error) => new InvalidConfiguration({ message: `Invalid configuration: ${String(error)}` }))
  )
)

/** What is kept of a receiver's answer: it is not read, only drained within this bound. */
const REPLY_LIMIT = 64 * 1024

/** Why an attempt got no status, in words that say nothing about the receiver's network (ports, hosts). */
const failureText = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "_tag" in error && error._tag === "TimeoutException") {
    return "the receiver did not answer in time"
  }
  const text = String((error as { cause?: unknown })?.cause ?? error)
  if (text.includes("ERR_OUTBOUND_BLOCKED") || text.includes("does not allow")) return "refused by the outbound policy"
  return "no answer from the receiver"
}

/**
 * Delivers the outbox (`webhook_deliveries`): any process claims due deliveries with `SKIP
 * LOCKED`, signs each per Standard Webhooks and posts it through the organization's outbound
 * policy. A 2xx answer delivers it; anything else is retried with exponential backoff until its
 * 24-hour window ends. An endpoint that has failed every delivery for 24 hours is disabled and
 * says why (`disabled_reason`). Every attempt is logged with its status and latency. Times come
 * from `Clock`, so the whole schedule runs under TestClock.
 */
export const makeWebhookDelivery = Effect.gen(function*() {
  const settings = yield* WebhookDeliverySettings
  const outbound = yield* OutboundHttp
  const secrets = yield* SecretBox
  const rows = yield* makeWebhookRows
  const render = yield* makeWebhookPayloads(yield* PublicUrl, secrets.sign)
  const client = outbound.client("webhook")
  // A claimed delivery is left alone this long: the request's timeout and the time to record it.
  const leaseMs = settings.timeoutMillis + 30_000

  const attempt = (delivery: ClaimedDelivery) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const payload = delivery.payload ?? (yield* rows.fixPayload(delivery.event_id, yield* render(delivery, now)))
      const body = JSON.stringify(payload)
      const secret = yield* secrets.decrypt(delivery.secret)
      const request = HttpClientRequest.post(delivery.url).pipe(
        HttpClientRequest.setHeaders({
          ...signedHeaders(secret, messageId(Number(delivery.event_id)), Math.floor(now / 1000), body),
          "user-agent": "talkgraph-webhooks"
        }),
        HttpClientRequest.bodyText(body, "application/json")
      )
      const sent = yield* client.execute(request).pipe(
        Effect.tap((response) => readBoundedReply(response, REPLY_LIMIT).pipe(Effect.ignore)),
        Effect.map((response) => response.status),
        Effect.scoped,
        Effect.timeout(settings.timeoutMillis),
        Effect.either
      )
      const after = yield* Clock.currentTimeMillis
      const status = sent._tag === "Right" ? sent.right : null
      const error = sent._tag === "Left"
        ? failureText(sent.left)
        : status! >= 200 && status! < 300
        ? null
        : `the receiver answered ${status}`
      yield* rows.logAttempt(delivery.id, now, status, after - now, error)
      if (error === null) {
        yield* rows.delivered(delivery, after, status!)
        return
      }
      const decision = afterFailure(settings.retry, delivery.attempts, after, delivery.retry_until.getTime())
      yield* rows.failedAttempt(delivery, after, status, error, decision._tag === "Retry" ? decision.at : null)
      if (shouldDisable(delivery.failing_since?.getTime() ?? after, after)) {
        yield* rows.disable(
          delivery.endpoint_id,
          after,
          "Every delivery failed for 24 hours; re-enable the endpoint once it answers"
        )
        yield* Effect.logWarning("webhook endpoint disabled after 24 hours of failures", {
          endpoint_id: delivery.endpoint_id,
          organization_id: delivery.organization_id
        })
      }
    }).pipe(
      Effect.withSpan("WebhookDelivery.attempt", {
        attributes: {
          "delivery.id": delivery.id,
          "endpoint.id": delivery.endpoint_id,
          "organization.id": delivery.organization_id,
          "event.type": delivery.event_type
        }
      }),
      Effect.onInterrupt(() =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => rows.release(delivery.id, now)).pipe(Effect.ignore)
      ),
      Effect.catchAllCause((cause) => Effect.logError("webhook delivery failed", { delivery_id: delivery.id }, cause))
    )

  /** One look at the outbox: claims what is due and sends it; how many it took. */
  const deliverDue = Effect.gen(function*() {
    const claimed = yield* rows.claim(yield* Clock.currentTimeMillis, leaseMs, settings.concurrency * 4)
    yield* Effect.forEach(claimed, attempt, { concurrency: settings.concurrency, discard: true })
    return claimed.length
  }).pipe(Effect.withSpan("WebhookDelivery.deliverDue"), Effect.orDie)

  return { deliverDue }
})

/** The delivery worker, in every process that serves: looks again at once while there is work, else after the poll interval. */
export const WebhookDeliveryLive = Layer.scopedDiscard(Effect.gen(function*() {
  const settings = yield* WebhookDeliverySettings
  const { deliverDue } = yield* makeWebhookDelivery
  yield* deliverDue.pipe(
    Effect.catchAllCause((cause) => Effect.as(Effect.logError("webhook outbox look failed", cause), 0)),
    Effect.flatMap((taken) => (taken > 0 ? Effect.void : Effect.sleep(settings.pollMillis))),
    Effect.forever,
    Effect.forkScoped
  )
}))
