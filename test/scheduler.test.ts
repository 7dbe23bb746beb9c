import { SqlClient } from "@effect/sql"
import { Effect, Layer, TestClock, TestContext } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  advance,
  advanceUntil,
  campaignRow,
  dialerLayer,
  finish,
  type IsolatedDatabase,
  isolatedDatabase,
  makeTestCarrier,
  runningCampaign,
  settle,
  type TestCarrier,
  testSettings
} from "./support/dialerHarness.ts"

let database: IsolatedDatabase
beforeAll(async () => {
  database = await isolatedDatabase()
})
afterAll(() => database?.close())

/** Monday 2 March 2026, 10:00 UTC. */
const MONDAY_10_UTC = Date.parse("2026-03-02T10:00:00Z")

/**
 * Runs a test against a fresh dialer on TestClock time. Campaigns left running are cancelled at
 * the end so the next test's dialer does not pick them up.
 */
const dialerTest = <A>(body: (carrier: TestCarrier) => Effect.Effect<A, unknown, any>, settings = testSettings) => {
  const carrier = makeTestCarrier()
  return Effect.runPromise(
    Effect.gen(function*() {
      yield* TestClock.setTime(MONDAY_10_UTC)
      return yield* Effect.scoped(
        Effect.gen(function*() {
          const dialer = yield* Layer.build(dialerLayer(database, carrier, settings))
          return yield* Effect.provide(body(carrier), dialer)
        })
      ).pipe(
        Effect.ensuring(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql`UPDATE campaigns SET state = 'cancelled' WHERE state = 'running'`
          ).pipe(Effect.orDie)
        )
      )
    }).pipe(
      Effect.provide(Layer.succeedContext(database.context)),
      Effect.provide(TestContext.TestContext)
    ) as Effect.Effect<A>
  )
}

const placedFor = (carrier: TestCarrier, campaignId: number) =>
  carrier.placed.filter((call) => call.to.startsWith(`+1555${String(campaignId).padStart(3, "0")}`))

const busiestSecond = (times: ReadonlyArray<number>) =>
  Math.max(...times.map((start) => times.filter((time) => time >= start && time < start + 1000).length))

const liveAttempts = (campaignId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<
        { live: number }
      >`SELECT count(*)::int AS live FROM campaign_attempts WHERE campaign_id = ${campaignId} AND ended_at IS NULL`,
      (rows) => rows[0]!.live
    ))

describe("the campaign dialer on TestClock time", () => {
  it("hands the carrier a media link that expires the longest call plus the token's lifetime after it placed the call", () =>
    dialerTest((carrier) =>
      Effect.gen(function*() {
        const { campaignId } = yield* runningCampaign({ contacts: 1 })
        yield* advance(1500)
        const [call] = placedFor(carrier, campaignId)
        const token = call!.mediaStreamUrl!.split("/").pop()!
        const expiresAtSeconds = Number(token.split(".")[0])
        // Placed at TestClock time (March 2026): a link timed by the wall clock would expire months later.
        expect(expiresAtSeconds).toBe(
          Math.floor(call!.at / 1000) + testSettings.mediaTokenSeconds + testSettings.maxCallSeconds
        )
      })
    ))

  it("never exceeds max_concurrency, and fills a slot as soon as a call ends", () =>
    dialerTest((carrier) =>
      Effect.gen(function*() {
        const { campaignId } = yield* runningCampaign({ contacts: 5, max_concurrency: 2 })
        yield* advance(3000)
        expect(placedFor(carrier, campaignId)).toHaveLength(2)
        expect(yield* liveAttempts(campaignId)).toBe(2)
        yield* finish(placedFor(carrier, campaignId)[0]!.runId, "completed")
        yield* advance(500)
        expect(placedFor(carrier, campaignId)).toHaveLength(3)
        expect(yield* liveAttempts(campaignId)).toBe(2)
      })
    ))

  it("places at most rate_limit_per_second calls in any one-second window", () =>
    dialerTest((carrier) =>
      Effect.gen(function*() {
        const { campaignId } = yield* runningCampaign({ contacts: 9, rate_limit_per_second: 3 })
        for (let step = 0; step < 40; step++) {
          yield* advance(100, 100)
          for (const call of placedFor(carrier, campaignId)) yield* finish(call.runId, "completed")
        }
        const times = placedFor(carrier, campaignId).map((call) => call.at)
        expect(times).toHaveLength(9)
        const busiest = Math.max(
          ...times.map((start) => times.filter((time) => time >= start && time < start + 1000).length)
        )
        expect(busiest).toBe(3)
      })
    ))

  it("claims contacts in batches at a high rate, keeping to the rate in every one-second window and reaching it", () =>
    dialerTest((carrier) =>
      Effect.gen(function*() {
        const { campaignId } = yield* runningCampaign({ contacts: 60, rate_limit_per_second: 20 })
        yield* advance(2000, 50)
        // 20 in each of the first two seconds: the rate, reached.
        expect(placedFor(carrier, campaignId).filter((call) => call.at < MONDAY_10_UTC + 2000)).toHaveLength(40)
        yield* advance(1500, 50)
        const times = placedFor(carrier, campaignId).map((call) => call.at)
        expect(times).toHaveLength(60)
        expect(busiestSecond(times)).toBe(20)
        const sql = yield* SqlClient.SqlClient
        const [attempts] = yield* sql<{ attempts: number; runs: number; contacts: number }>`
          SELECT count(*)::int AS attempts, count(DISTINCT run_id)::int AS runs, count(DISTINCT contact_id)::int AS contacts
          FROM campaign_attempts WHERE campaign_id = ${campaignId}`
        expect(attempts).toEqual({ attempts: 60, runs: 60, contacts: 60 })
        expect((yield* campaignRow(campaignId)).executed_count).toBe(60)
      }), { ...testSettings, orgMaxConcurrentCalls: 1000 }))

  it("keeps the organization's live calls within its limit across its campaigns, and refills a freed slot", () =>
    dialerTest(
      (carrier) =>
        Effect.gen(function*() {
          const first = yield* runningCampaign({ contacts: 5 })
          const second = yield* runningCampaign({ contacts: 5, organization: first.organization })
          const placed = () => [...placedFor(carrier, first.campaignId), ...placedFor(carrier, second.campaignId)]
          yield* advance(2000)
          expect(placed()).toHaveLength(3)
          expect((yield* liveAttempts(first.campaignId)) + (yield* liveAttempts(second.campaignId))).toBe(3)
          yield* finish(placed()[0]!.runId, "completed")
          yield* advance(1000)
          expect(placed()).toHaveLength(4)
          expect((yield* liveAttempts(first.campaignId)) + (yield* liveAttempts(second.campaignId))).toBe(3)
        }),
      { ...testSettings, orgMaxConcurrentCalls: 3 }
    ))

  it("retries exactly the reasons the retry config names, after the delay, up to max_retries", () =>
    dialerTest((carrier) =>
      Effect.gen(function*() {
        const { campaignId } = yield* runningCampaign({
          contacts: 3,
          retry_config: {
            max_retries: 1,
            retry_delay_seconds: 60,
            retry_on_busy: true,
            retry_on_no_answer: false,
            retry_on_voicemail: true
          }
        })
        yield* advance(1000)
        const [busy, noAnswer, voicemail] = placedFor(carrier, campaignId)
        yield* finish(busy!.runId, "busy")
        yield* finish(noAnswer!.runId, "no-answer")
        yield* finish(voicemail!.runId, "voicemail")
        yield* advance(58_000, 1000)
        expect(placedFor(carrier, campaignId)).toHaveLength(3)
        yield* advance(3000, 500)
        const retried = placedFor(carrier, campaignId).slice(3)
        expect(retried.map((call) => call.to).sort()).toEqual([busy!.to, voicemail!.to].sort())
        for (const call of retried) yield* finish(call.runId, "busy")
        yield* advance(120_000, 2000)
        expect(placedFor(carrier, campaignId)).toHaveLength(5)
        expect(yield* campaignRow(campaignId)).toMatchObject({
          state: "completed",
          processed_rows: 3,
          failed_rows: 3,
          executed_count: 5,
          total_queued_count: 5
        })
      })
    ))

  it("dials again a contact whose call the carrier could not take (unreachable), not one it refused", () =>
    dialerTest((carrier) =>
      Effect.gen(function*() {
        carrier.refusals.push({ permanent: false }, { permanent: true })
        const { campaignId } = yield* runningCampaign({
          contacts: 2,
          max_concurrency: 1,
          retry_config: { max_retries: 1, retry_delay_seconds: 60 }
        })
        // Both refused at once (one slot: the first refusal frees it for the second).
        yield* advance(2000, 500)
        expect(placedFor(carrier, campaignId)).toHaveLength(0)
        yield* advance(60_000, 2000)
        // Due 60 s after its refusal; on a loaded machine the dialer's steps lag the test's.
        yield* advanceUntil(() => placedFor(carrier, campaignId).length > 0)
        const [retried] = placedFor(carrier, campaignId)
        expect(placedFor(carrier, campaignId)).toHaveLength(1)
        yield* finish(retried!.runId, "completed")
        yield* advance(120_000, 5000)
        expect(placedFor(carrier, campaignId)).toHaveLength(1)
        expect(yield* campaignRow(campaignId)).toMatchObject({
          state: "completed",
          processed_rows: 2,
          failed_rows: 1,
          executed_count: 3
        })
      })
    ))

  it("trips the breaker (pausing and logging the failures), and starts a fresh window after resume", () =>
    dialerTest((carrier) =>
      Effect.gen(function*() {
        const { campaignId } = yield* runningCampaign({
          contacts: 6,
          max_concurrency: 3,
          circuit_breaker: { enabled: true, failure_threshold: 0.6, window_seconds: 60, min_calls_in_window: 3 }
        })
        yield* advance(1000)
        const first = placedFor(carrier, campaignId)
        expect(first).toHaveLength(3)
        // Each outcome frees a slot, so two more calls go out before the third outcome trips the breaker.
        yield* finish(first[0]!.runId, "failed")
        yield* advance(300)
        yield* finish(first[1]!.runId, "failed")
        yield* advance(300)
        yield* finish(first[2]!.runId, "completed")
        yield* advance(2000)
        const paused = yield* campaignRow(campaignId)
        expect(paused.state).toBe("paused")
        const trip = paused.logs.at(-1)!
        expect(trip.event).toBe("circuit_breaker_tripped")
        expect(trip.details).toMatchObject({ calls_in_window: 3, failures_in_window: 2 })
        expect(trip.details.recent_failures).toHaveLength(2)
        const atTrip = placedFor(carrier, campaignId).length
        expect(atTrip).toBe(5)
        yield* advance(3000)
        expect(placedFor(carrier, campaignId)).toHaveLength(atTrip)

        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE campaigns SET state = 'running', updated_at = now() WHERE id = ${campaignId}`
        yield* advance(3000)
        // The old failures no longer count: dialling continues although they are still in the window.
        expect(placedFor(carrier, campaignId)).toHaveLength(6)
        expect((yield* campaignRow(campaignId)).state).toBe("running")
      })
    ))

  it("reconciles calls without a final event at their deadline, freeing their slots", () =>
    dialerTest((carrier) =>
      Effect.gen(function*() {
        const { campaignId } = yield* runningCampaign({ contacts: 3, max_concurrency: 2 })
        yield* advance(1000)
        const [ended, stuck] = placedFor(carrier, campaignId)
        carrier.statuses.set(ended!.providerCallId, {
          providerCallId: ended!.providerCallId,
          outcome: "completed",
          durationSeconds: 42
        })
        yield* advance(65_000, 1000)
        expect(placedFor(carrier, campaignId)).toHaveLength(2)
        yield* advance(10_000, 1000)
        expect(carrier.hungUp).toContain(stuck!.providerCallId)
        const sql = yield* SqlClient.SqlClient
        const attempts = yield* sql<{ run_id: number; outcome: string; end_reason: string }>`
          SELECT run_id, outcome, end_reason FROM campaign_attempts WHERE campaign_id = ${campaignId} AND ended_at IS NOT NULL ORDER BY id`
        expect(attempts.map((attempt) => [attempt.run_id, attempt.outcome, attempt.end_reason])).toEqual([
          [ended!.runId, "completed", "reconciled_completed"],
          [stuck!.runId, "failed", "deadline_exceeded"]
        ])
        expect(placedFor(carrier, campaignId)).toHaveLength(3)
      })
    ))

  it("waits for the next calling window, across days, then dials", () =>
    dialerTest(
      (carrier) =>
        Effect.gen(function*() {
          // Monday 10:00 UTC is 11:00 in Paris; the only slot is Tuesday 09:00–10:00 Paris time.
          const { campaignId } = yield* runningCampaign({
            contacts: 1,
            schedule_config: {
              enabled: true,
              timezone: "Europe/Paris",
              slots: [{ day_of_week: 1, start_time: "09:00", end_time: "10:00" }]
            }
          })
          yield* advance(5000)
          expect(placedFor(carrier, campaignId)).toHaveLength(0)
          yield* TestClock.adjust(Date.parse("2026-03-03T07:59:00Z") - MONDAY_10_UTC - 5000)
          yield* settle(100)
          yield* advance(50_000, 5000)
          expect(placedFor(carrier, campaignId)).toHaveLength(0)
          yield* advance(70_000, 5000)
          const [call] = placedFor(carrier, campaignId)
          expect(call).toBeDefined()
          expect(call!.at).toBeGreaterThanOrEqual(Date.parse("2026-03-03T08:00:00Z"))
        }), // A day of TestClock time at a one-second poll is 80,000 supervisor ticks; a minute's poll keeps the jump quick.
      { ...testSettings, pollMillis: 60_000 }
    ))

  it("completes the campaign once nothing is pending, scheduled or live, with exact counters", () =>
    dialerTest((carrier) =>
      Effect.gen(function*() {
        const { campaignId } = yield* runningCampaign({ contacts: 4 })
        yield* advance(1000)
        const calls = placedFor(carrier, campaignId)
        yield* finish(calls[0]!.runId, "completed")
        yield* finish(calls[1]!.runId, "failed")
        yield* finish(calls[2]!.runId, "canceled")
        yield* advance(2000)
        expect((yield* campaignRow(campaignId)).state).toBe("running")
        yield* finish(calls[3]!.runId, "completed")
        yield* finish(calls[3]!.runId, "busy")
        yield* advance(2000)
        expect(yield* campaignRow(campaignId)).toMatchObject({
          state: "completed",
          processed_rows: 4,
          failed_rows: 2,
          executed_count: 4,
          total_queued_count: 4
        })
      })
    ))
})
