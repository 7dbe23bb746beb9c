import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, TestClock, TestContext, Tracer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  advanceUntil,
  dialerLayer,
  type IsolatedDatabase,
  isolatedDatabase,
  makeTestCarrier,
  runningCampaign
} from "./support/dialerHarness.ts"

let database: IsolatedDatabase
beforeAll(async () => {
  database = await isolatedDatabase()
})
afterAll(() => database?.close())

/** The native tracer, remembering every span it makes. */
const recordingTracer = (native: Tracer.Tracer, spans: Array<Tracer.Span>) =>
  Tracer.make({
    span: (...args) => {
      const span = native.span(...args)
      spans.push(span)
      return span
    },
    context: (f, fiber) => native.context(f, fiber)
  })

const parentOf = (span: Tracer.Span) => Option.getOrUndefined(span.parent)?.spanId

describe("the dialer's spans", () => {
  it("show each campaign's actor as a trace of its own, with each placed call inside it under its run id", async () => {
    const carrier = makeTestCarrier()
    const spans: Array<Tracer.Span> = []
    const { campaignId, organizationId } = await Effect.runPromise(
      Effect.gen(function*() {
        const tracer = recordingTracer(yield* Effect.tracer, spans)
        return yield* Effect.gen(function*() {
          yield* TestClock.setTime(Date.parse("2026-03-02T10:00:00Z"))
          return yield* Effect.scoped(Effect.gen(function*() {
            const dialer = yield* Layer.build(dialerLayer(database, carrier))
            const campaign = yield* Effect.provide(runningCampaign({ contacts: 2 }), dialer)
            yield* advanceUntil(() => carrier.placed.length >= 2)
            return campaign
          }))
        }).pipe(Effect.withTracer(tracer))
      }).pipe(
        Effect.ensuring(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE campaigns SET state = 'cancelled'`).pipe(Effect.orDie)
        ),
        Effect.provide(Layer.succeedContext(database.context)),
        Effect.provide(TestContext.TestContext),
        Effect.orDie
      )
    )
    expect(carrier.placed).toHaveLength(2)
    const actors = spans.filter((span) =>
      span.name === "CampaignScheduler.actor" && span.attributes.get("campaign.id") === campaignId
    )
    expect(actors).toHaveLength(1)
    const actor = actors[0]!
    expect(Option.isNone(actor.parent)).toBe(true)
    expect(actor.attributes.get("organization.id")).toBe(organizationId)
    const calls = spans.filter((span) => span.name === "CampaignScheduler.call")
    expect(calls.map((span) => span.attributes.get("run.id")).sort()).toEqual(
      carrier.placed.map((call) => call.runId).sort()
    )
    for (const call of calls) {
      expect(parentOf(call)).toBe(actor.spanId)
      expect(call.traceId).toBe(actor.traceId)
      expect(call.attributes.get("campaign.id")).toBe(campaignId)
    }
  })
})
