import { SqlClient } from "@effect/sql"
import { Effect, Layer, TestClock, TestContext } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeWebhookDelivery, WebhookDeliverySettings } from "../layers/webhooks/webhookDelivery.ts"
import { SecretBox } from "../services/SecretBox.ts"
import { afterFailure, retryDefaults, shouldDisable } from "../src/webhooks/retrySchedule.ts"
import { secretFromBytes, signedHeaders } from "../src/webhooks/standardWebhooks.ts"
import { type IsolatedDatabase, isolatedDatabase, newOrganization } from "./support/dialerHarness.ts"

const HOUR = 60 * 60 * 1000

describe("webhook signatures and retry rules", () => {
  it("sign messages so a Standard Webhooks library accepts them, and only with the right secret", () => {
    const secret = secretFromBytes(new Uint8Array(32).map((_, index) => index * 7))
    const body = JSON.stringify({ type: "run.completed", data: { run_id: 7 } })
    const now = Math.floor(Date.now() / 1000)
    const headers = signedHeaders(secret, "msg_7", now, body)
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
    const other = secretFromBytes(new Uint8Array(32).fill(1))
    expect(() => new Webhook(other).verify(body, headers)).toThrow()
    expect(() => new Webhook(secret).verify(body.replace("7", "8"), headers)).toThrow()
    // After a rotation both secrets sign: either one verifies.
    const both = signedHeaders([other, secret], "msg_7", now, body)
    expect(both["webhook-signature"].split(" ")).toHaveLength(2)
    expect(new Webhook(secret).verify(body, both)).toEqual(JSON.parse(body))
    expect(new Webhook(other).verify(body, both)).toEqual(JSON.parse(body))
  })

  it("back off exponentially, capped at an hour, and give up when the 24-hour window ends", () => {
    const start = 1_000_000
    const until = start + 24 * HOUR
    expect(afterFailure(retryDefaults, 1, start, until)).toEqual({ _tag: "Retry", at: start + 5_000 })
    expect(afterFailure(retryDefaults, 2, start, until)).toEqual({ _tag: "Retry", at: start + 10_000 })
    expect(afterFailure(retryDefaults, 10, start, until)).toEqual({ _tag: "Retry", at: start + 2_560_000 })
    expect(afterFailure(retryDefaults, 11, start, until)).toEqual({ _tag: "Retry", at: start + HOUR })
    // The last try is made at the window's end, not skipped.
    expect(afterFailure(retryDefaults, 40, until - 1000, until)).toEqual({ _tag: "Retry", at: until })
    expect(afterFailure(retryDefaults, 41, until, until)).toEqual({ _tag: "GiveUp" })
    expect(shouldDisable(null, start)).toBe(false)
    expect(shouldDisable(start, start + 24 * HOUR - 1)).toBe(false)
    expect(shouldDisable(start, start + 24 * HOUR)).toBe(true)
  })
})

let database: IsolatedDatabase
let receiver: http.Server
let received = 0
beforeAll(async () => {
  database = await isolatedDatabase()
  // A receiver that is always failing; it does not check timestamps, which TestClock moves a day ahead.
  receiver = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      received++
      response.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
})
afterAll(async () => {
  receiver?.close()
  await database?.close()
})

describe("the webhook outbox under TestClock", () => {
  it(
    "retries a failing endpoint with backoff for 24 hours, then gives up and disables the endpoint, saying why",
    () =>
      Effect.runPromise(
        Effect.gen(function*() {
          yield* TestClock.setTime(Date.now())
          const sql = yield* SqlClient.SqlClient
          const secrets = yield* SecretBox
          const org = yield* newOrganization
          const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
          const [endpoint] = yield* sql<{ id: number }>`
          INSERT INTO webhook_endpoints (organization_id, url, event_types, secret, created_at, updated_at)
          VALUES (${org.organizationId}, ${url}, '["run.completed"]'::jsonb,
                  ${secrets.encrypt(secretFromBytes(new Uint8Array(32).fill(3)))}, now(), now())
          RETURNING id`
          const [run] = yield* sql<{ id: number }>`
          INSERT INTO runs (organization_id, workflow_id, name, channel, mode, direction)
          VALUES (${org.organizationId}, ${org.workflowId}, 'run', 'chat', 'chat', 'inbound') RETURNING id`
          // The run's end writes the event and its delivery, in the same statement's transaction.
          yield* sql`UPDATE runs SET state = 'completed', ended_at = now() WHERE id = ${run!.id}`
          const delivery = () =>
            Effect.map(
              sql<{ state: string; attempts: number; next_attempt_at: Date }>`
              SELECT state, attempts, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = ${endpoint!.id}`,
              (rows) => rows[0]!
            )

          const { deliverDue } = yield* makeWebhookDelivery
          const gaps: Array<number> = []
          let previous = yield* TestClock.currentTimeMillis
          for (let step = 0; step < 100; step++) {
            const current = yield* delivery()
            if (current.state !== "pending") break
            const due = current.next_attempt_at.getTime()
            const now = yield* TestClock.currentTimeMillis
            if (due > now) {
              // Not a moment before it is due.
              yield* TestClock.adjust(due - now - 1)
              expect(yield* deliverDue).toBe(0)
              yield* TestClock.adjust(1)
            }
            expect(yield* deliverDue).toBe(1)
            const at = yield* TestClock.currentTimeMillis
            if (step > 0) gaps.push(at - previous)
            previous = at
          }
          const final = yield* delivery()
          expect(final.state).toBe("failed")
          expect(received).toBe(final.attempts)
          expect(gaps.slice(0, 5)).toEqual([5_000, 10_000, 20_000, 40_000, 80_000])
          expect(Math.max(...gaps)).toBe(HOUR)
          const [attempts] = yield* sql<{ count: number; statuses: Array<number> }>`
          SELECT count(*)::int AS count, array_agg(DISTINCT status) AS statuses
          FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE d.endpoint_id = ${endpoint!.id}`
          expect(attempts).toEqual({ count: final.attempts, statuses: [500] })
          const [state] = yield* sql<{ enabled: boolean; disabled_reason: string | null }>`
          SELECT enabled, disabled_reason FROM webhook_endpoints WHERE id = ${endpoint!.id}`
          expect(state).toEqual({
            enabled: false,
            disabled_reason: "Every delivery failed for 24 hours; re-enable the endpoint once it answers"
          })
          // A disabled endpoint is given no new deliveries.
          const [later] = yield* sql<{ id: number }>`
          INSERT INTO runs (organization_id, workflow_id, name, channel, mode, direction)
          VALUES (${org.organizationId}, ${org.workflowId}, 'run', 'chat', 'chat', 'inbound') RETURNING id`
          yield* sql`UPDATE runs SET state = 'completed', ended_at = now() WHERE id = ${later!.id}`
          const [count] = yield* sql<{ deliveries: number }>`
          SELECT count(*)::int AS deliveries FROM webhook_deliveries WHERE endpoint_id = ${endpoint!.id}`
          expect(count!.deliveries).toBe(1)
        }).pipe(
          Effect.scoped,
          Effect.provide(
            Layer.succeed(WebhookDeliverySettings, {
              pollMillis: 100,
              retry: retryDefaults,
              timeoutMillis: 5_000,
              concurrency: 4
            })
          ),
          Effect.provide(Layer.succeedContext(database.context)),
          Effect.provide(TestContext.TestContext)
        ) as Effect.Effect<void>
      ),
    60_000
  )
})
