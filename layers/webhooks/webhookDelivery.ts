import { HttpClientRequest } from "@effect/platform"
import { Clock, Config, Context, Effect, Layer } from "effect"
import { InvalidConfiguration } from "../../services/AppConfig.ts"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { failureText } from "../../src/webhooks/attemptFailure.ts"
import { afterFailure, retryDefaults, type RetrySettings, shouldDisable } from "../../src/webhooks/retrySchedule.ts"
import { signedHeaders } from "../../src/webhooks/standardWebhooks.ts"
import { messageId } from "../../src/webhooks/webhookRecord.ts"
import { readBoundedReply } from "../outbound/replyBody.ts"
import { makeWebhookNodeMessages } from "./webhookNodeMessages.ts"
import { makeWebhookPayloads } from "./webhookPayloads.ts"
import { type ClaimedDelivery, type ClaimedNodeDelivery, makeWebhookRows } from "./webhookRows.ts"

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
  const nodeMessages = yield* makeWebhookNodeMessages
  // A claimed delivery is left alone this long: the request's timeout and the time to record it.
  const leaseMs = settings.timeoutMillis + 30_000

  /** Sends one message; answers what the attempt came to, for the batch's bookkeeping. */
  const send = (delivery: ClaimedDelivery, payload: Record<string, unknown>) =>
    Effect.gen(function*() {
      const attemptedAt = yield* Clock.currentTimeMillis
      const body = JSON.stringify(payload)
      const secret = yield* secrets.decrypt(delivery.secret)
      const previous = delivery.previous_secret !== null &&
          (delivery.previous_secret_expires_at?.getTime() ?? 0) > attemptedAt
        ? [yield* secrets.decrypt(delivery.previous_secret)]
        : []
      const request = HttpClientRequest.post(delivery.url).pipe(
        HttpClientRequest.setHeaders({
          ...signedHeaders(
            [secret, ...previous],
            messageId(Number(delivery.event_id)),
            Math.floor(attemptedAt / 1000),
            body
          ),
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
      return { delivery, attemptedAt, latency: after - attemptedAt, status, error }
    }).pipe(
      Effect.withSpan("WebhookDelivery.send", {
        attributes: {
          "delivery.id": delivery.id,
          "endpoint.id": delivery.endpoint_id,
          "organization.id": delivery.organization_id,
          "event.type": delivery.event_type
        }
      })
    )

  interface Sent {
    readonly delivery: ClaimedDelivery | ClaimedNodeDelivery
    readonly attemptedAt: number
    readonly latency: number
    readonly status: number | null
    readonly error: string | null
  }

  /**
   * A failed attempt: retried with backoff, or given up; an endpoint disabled after a day of
   * failures (a node is not: each run's message is its own, and the next run tries again).
   */
  const failed = (result: Sent, now: number) =>
    Effect.gen(function*() {
      const { delivery } = result
      const decision = afterFailure(settings.retry, delivery.attempts, now, delivery.retry_until.getTime())
      yield* rows.failedAttempt(
        delivery,
        now,
        result.status,
        result.error!,
        decision._tag === "Retry" ? decision.at : null
      )
      if (delivery.endpoint_id !== null && shouldDisable(delivery.failing_since?.getTime() ?? now, now)) {
        yield* rows.disable(
          delivery.endpoint_id,
          now,
          "Every delivery failed for 24 hours; re-enable the endpoint once it answers"
        )
        yield* Effect.logWarning("webhook endpoint disabled after 24 hours of failures", {
          endpoint_id: delivery.endpoint_id,
          organization_id: delivery.organization_id
        })
      }
    })

  /**
   * One look at the outbox: claims what is due, renders the bodies not yet fixed (one query per
   * kind of event), sends the messages side by side, and records the batch in one transaction of a
   * few statements whatever its size (the attempts, the accepted deliveries; failures are rarer and
   * recorded one by one). Answers how many it took. Stopped midway (shutdown), it hands back what it had not
   * recorded, due at once.
   */
  const deliverDue = Effect.gen(function*() {
    const { endpoints, nodes } = yield* rows.claim(
      yield* Clock.currentTimeMillis,
      leaseMs,
      settings.concurrency * 4
    )
    const claimed = [...endpoints, ...nodes]
    if (claimed.length === 0) return 0
    const work = Effect.gen(function*() {
      const unrendered = endpoints.filter((delivery) => delivery.payload === null)
      const fixed = unrendered.length === 0
        ? new Map<number, Record<string, unknown>>()
        : yield* rows.fixPayloads(yield* render(unrendered, yield* Clock.currentTimeMillis))
      const unrenderedNodes = nodes.filter((delivery) => delivery.body === null)
      const fixedBodies = unrenderedNodes.length === 0
        ? new Map<number, unknown>()
        : yield* rows.fixNodeBodies(yield* nodeMessages.render(unrenderedNodes, yield* Clock.currentTimeMillis))
      const results: ReadonlyArray<Sent> = yield* Effect.forEach(
        claimed,
        (delivery): Effect.Effect<Sent, Effect.Effect.Error<ReturnType<typeof send>>> =>
          delivery.endpoint_id === null
            ? nodeMessages.send(
              delivery,
              delivery.body ?? fixedBodies.get(Number(delivery.id)),
              settings.timeoutMillis
            )
            : send(delivery, delivery.payload ?? fixed.get(Number(delivery.event_id))!),
        { concurrency: settings.concurrency }
      )
      const now = yield* Clock.currentTimeMillis
      yield* rows.recordBatch(Effect.gen(function*() {
        yield* rows.logAttempts(results.map((result) => ({
          delivery_id: Number(result.delivery.id),
          attempted_at: result.attemptedAt,
          status: result.status,
          latency_ms: result.latency,
          error: result.error
        })))
        const accepted = results.filter((result) => result.error === null)
        if (accepted.length > 0) {
          yield* rows.delivered(
            accepted.map((result) => ({ id: Number(result.delivery.id), status: result.status! })),
            now
          )
        }
        yield* Effect.forEach(results.filter((result) => result.error !== null), (result) => failed(result, now), {
          discard: true
        })
      }))
    })
    yield* work.pipe(
      Effect.onInterrupt(() =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (now) => rows.release(claimed.map((delivery) => Number(delivery.id)), now)
        )
          .pipe(Effect.ignore)
      )
    )
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
