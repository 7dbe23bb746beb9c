import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { twilioSignature } from "../src/telephony/twilioSignature.ts"
import { newAccount } from "./support/accounts.ts"
import {
  type CarrierProviderName,
  carrierProviders,
  type CarrierStandIn,
  startCarrierStandIn
} from "./support/carrierStandIns.ts"
import { type Client, client } from "./support/client.ts"
import { carrierTelephony, contactsCsv, eventually, numbersFrom, startedCampaign } from "./support/dialerFixtures.ts"
import { type CallScript, type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let carrier: FakeTwilio
const standIns = new Map<CarrierProviderName, CarrierStandIn>()

/** Per-number scripts; a number can answer differently on each attempt. */
const scripts = new Map<string, ReadonlyArray<CallScript>>()
const attemptsSeen = new Map<string, number>()

/** Vonage and Plivo write numbers without the "+". */
const e164 = (number: string) => (number.startsWith("+") ? number : `+${number}`)

const script = ({ to }: { readonly to: string }) => {
  const plan = scripts.get(e164(to)) ?? [{ outcome: "completed" }]
  const seen = attemptsSeen.get(e164(to)) ?? 0
  attemptsSeen.set(e164(to), seen + 1)
  return plan[Math.min(seen, plan.length - 1)]!
}

beforeAll(async () => {
  carrier = await startFakeTwilio({ script })
  standIns.set("twilio", carrier)
  for (const provider of carrierProviders.filter((name) => name !== "twilio")) {
    standIns.set(provider, await startCarrierStandIn(provider, { script }))
  }
  // Its own database: another test file's server would otherwise lease these campaigns and leave
  // them mid-call when that file ends.
  server = await startServer({
    TALKGRAPH_SCHEDULER_POLL_MS: "200",
    TALKGRAPH_MAX_CALL_SECONDS: "2",
    TALKGRAPH_CALL_DEADLINE_GRACE_SECONDS: "1"
  }, { ownDatabase: true })
  api = client(server.url)
})
afterAll(async () => {
  await server?.close()
  for (const standIn of standIns.values()) await standIn.close()
})

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

const campaignOf = async (id: number, token: string) => (await api.get(`/api/v1/campaign/${id}`, { token })).body

const callsTo = (numbers: ReadonlyArray<string>, through: Pick<CarrierStandIn, "calls"> = carrier) =>
  through.calls().filter((call) => numbers.includes(e164(call.to)))

describe.each(carrierProviders.map((provider, index) => ({ provider, index })))(
  "a campaign dialled through $provider",
  ({ provider, index }) => {
    it("calls every contact from CSV to completed, retrying a busy line, telling a machine's answer and a time limit from a failure, with exact counters", async () => {
      const standIn = standIns.get(provider)!
      const account = await newAccount(api)
      await carrierTelephony(api, { token: account.token }, standIn, { machineDetection: true })
      const numbers = numbersFrom(`+1415${210 + index}`, 7)
      scripts.set(numbers[3]!, [{ outcome: "busy" }, { outcome: "completed" }])
      // The machine talks on after detection has judged it: the call ends later, as completed.
      scripts.set(numbers[4]!, [{ outcome: "voicemail", talkMs: 700 }])
      scripts.set(numbers[5]!, [{ outcome: "failed" }])
      // Talks past the call's time limit (TALKGRAPH_MAX_CALL_SECONDS): the carrier ends it, completed.
      scripts.set(numbers[6]!, [{ outcome: "completed", talkMs: 10_000 }])
      // Only its events are looked at (in the outbox), not delivered: a sink that is not listening will do.
      const hooks = await api.post("/api/v1/webhooks", {
        url: `${server.url}/voicemail-sink`,
        event_types: ["call.voicemail"]
      }, { token: account.token })
      expect(hooks.status).toBe(200)
      const id = await startedCampaign(server, api, account, contactsCsv(numbers), { rate_limit_per_second: 10 })

      // The busy contact is rescheduled after retry_delay_seconds (at least 30 s); bring it forward.
      await eventually(
        async () => {
          const [row] = await query<{ state: string; attempt_count: number }>((sql) =>
            sql`SELECT state, attempt_count FROM campaign_contacts WHERE campaign_id = ${id} AND phone_number = ${numbers[
              3
            ]!}`
          )
          return row?.state === "pending" && row.attempt_count === 1
        },
        20_000,
        "busy contact rescheduled"
      )
      await query((sql) =>
        sql`UPDATE campaign_contacts SET next_attempt_at = now() WHERE campaign_id = ${id} AND state = 'pending'`
      )

      const done = await eventually(
        async () => {
          const campaign = await campaignOf(id, account.token)
          return campaign.state === "completed" ? campaign : undefined
        },
        20_000,
        "campaign completed"
      )
      expect(done).toMatchObject({
        processed_rows: 7,
        failed_rows: 2,
        executed_count: 8,
        total_queued_count: 8,
        total_rows: 7
      })
      expect(done.logs.at(-1)).toMatchObject({ event: "campaign_completed" })
      const calls = callsTo(numbers, standIn)
      expect(calls.map((call) => e164(call.to)).sort()).toEqual([...numbers, numbers[3]!].sort())

      const contacts = await query<
        { phone_number: string; state: string; last_outcome: string; attempt_count: number }
      >((sql) =>
        sql`SELECT phone_number, state, last_outcome, attempt_count FROM campaign_contacts WHERE campaign_id = ${id} ORDER BY id`
      )
      expect(contacts.map((contact) => [contact.state, contact.last_outcome, contact.attempt_count])).toEqual([
        ["completed", "completed", 1],
        ["completed", "completed", 1],
        ["completed", "completed", 1],
        ["completed", "completed", 2],
        ["failed", "voicemail", 1],
        ["failed", "failed", 1],
        ["completed", "completed", 1]
      ])
      // The carrier's machine verdict is a call.voicemail event, for the machine's call only.
      const voicemailEvents = await query<{ outcome: string }>((sql) =>
        sql`SELECT a.outcome FROM webhook_events e JOIN campaign_attempts a ON a.run_id = e.run_id
            WHERE a.campaign_id = ${id} AND e.type = 'call.voicemail'`
      )
      expect(voicemailEvents).toEqual([{ outcome: "voicemail" }])
      // Each attempt ended when its call did, not at a progress event (a machine's verdict) before.
      const attempts = await query<{ provider_call_id: string; ended_at: Date; end_reason: string }>((sql) =>
        sql`SELECT provider_call_id, ended_at, end_reason FROM campaign_attempts WHERE campaign_id = ${id}`
      )
      for (const attempt of attempts) {
        const call = calls.find((candidate) => candidate.placementId === attempt.provider_call_id)!
        expect(call.endedAt).not.toBeNull()
        expect(attempt.ended_at.getTime()).toBeGreaterThanOrEqual(call.endedAt! - 50)
      }
      const timeLimited = calls.find((call) => e164(call.to) === numbers[6])!
      expect(timeLimited.endedBy).toBe("time-limit")

      const runs = await api.get(`/api/v1/campaign/${id}/runs`, { token: account.token })
      expect(runs.body.total_count).toBe(8)
      expect(
        runs.body.runs.every((run: { mode: string; direction: string }) =>
          run.mode === provider && run.direction === "outbound"
        )
      ).toBe(true)
      const [run] = await query<{ channel: string; initial_context: Record<string, unknown> }>((sql) =>
        sql`SELECT channel, initial_context FROM runs WHERE campaign_id = ${id} ORDER BY id LIMIT 1`
      )
      expect(run).toMatchObject({
        channel: "telephony",
        initial_context: { first_name: "Person 1", phone_number: numbers[0] }
      })

      // The carrier was given a media stream with a signed, expiring token (Telnyx when dialled, the others in the answer).
      const answered = callsTo([numbers[0]!], standIn)[0]!
      expect(answered.streamUrl).toMatch(
        new RegExp(`^ws://127\\.0\\.0\\.1:\\d+/api/v1/telephony/${provider}/media/\\d+/\\d+\\.[\\w-]+$`)
      )
      expect(standIn.callbackFailures()).toEqual([])

      const progress = (await api.get(`/api/v1/campaign/${id}/progress`, { token: account.token })).body
      expect(progress).toMatchObject({ state: "completed", processed_rows: 7, live_calls: 0 })
      expect(progress.dispatch).toMatchObject({
        live_calls: 0,
        rate_limit_per_second: 10,
        breaker: { enabled: true, state: "closed", failures_in_window: 1 },
        within_schedule: true,
        next_window_at: null,
        dialer: null
      })
      expect(progress.dispatch.rate_achieved_per_second).toBeGreaterThan(0)
    })
  }
)

describe("a campaign dialled through the Twilio carrier", () => {
  it("refuses forged or altered callbacks with 403 and never applies them; a repeated callback changes nothing", async () => {
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, carrier)
    const numbers = numbersFrom("+1415201", 1)
    scripts.set(numbers[0]!, [{ outcome: "silent" }])
    const id = await startedCampaign(server, api, account, contactsCsv(numbers))
    const call = await eventually(async () => callsTo(numbers)[0], 10_000, "call placed")
    const [attempt] = await query<{ run_id: number }>((sql) =>
      sql`SELECT run_id FROM campaign_attempts WHERE campaign_id = ${id}`
    )
    const url = `${server.url}/api/v1/telephony/twilio/status/${attempt!.run_id}`
    const params = { AccountSid: carrier.accountSid, CallSid: call.id, CallStatus: "completed", CallDuration: "5" }
    const post = (signature: string, body = params, target = url) =>
      fetch(target, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
        body: new URLSearchParams(body).toString()
      })

    expect((await post(twilioSignature("not-the-token", url, params))).status).toBe(403)
    const altered = await post(twilioSignature(carrier.authToken, url, params), { ...params, CallStatus: "busy" })
    expect(altered.status).toBe(403)
    expect(await altered.json()).toEqual({ detail: "Invalid webhook signature" })
    const unsigned = await fetch(url, { method: "POST", body: new URLSearchParams(params).toString() })
    expect(unsigned.status).toBe(403)
    expect((await campaignOf(id, account.token)).processed_rows).toBe(0)

    // Signed by the account, but about another of its calls pointed at this run: refused, not applied.
    const otherCall = { ...params, CallSid: `CA${"0".repeat(32)}` }
    for (const target of [url, url.replace("/status/", "/answer/")]) {
      const refused = await post(twilioSignature(carrier.authToken, target, otherCall), otherCall, target)
      expect(refused.status).toBe(403)
      expect(await refused.json()).toEqual({ detail: "This callback is not about the call placed for this run" })
    }
    const [stillLive] = await query<{ ended_at: Date | null; answered_at: Date | null; provider_call_id: string }>((
      sql
    ) => sql`SELECT ended_at, answered_at, provider_call_id FROM campaign_attempts WHERE campaign_id = ${id}`)
    expect(stillLive).toEqual({ ended_at: null, answered_at: null, provider_call_id: call.id })
    expect((await campaignOf(id, account.token)).processed_rows).toBe(0)

    const genuine = twilioSignature(carrier.authToken, url, params)
    expect((await post(genuine)).status).toBe(204)
    expect((await post(genuine)).status).toBe(204)
    const late = { ...params, CallStatus: "busy" }
    expect((await post(twilioSignature(carrier.authToken, url, late), late)).status).toBe(204)
    const campaign = await eventually(
      async () => {
        const current = await campaignOf(id, account.token)
        return current.state === "completed" ? current : undefined
      },
      10_000,
      "completed"
    )
    expect(campaign).toMatchObject({ processed_rows: 1, failed_rows: 0, executed_count: 1 })

    // Whoever cannot sign learns nothing of which runs exist: an unknown run, or a run of another
    // carrier, is refused exactly as a bad signature on a real one.
    const refusal = async (target: string) => {
      const response = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(params).toString()
      })
      return { status: response.status, body: await response.text() }
    }
    const badSignature = await refusal(url)
    expect(badSignature).toEqual({ status: 403, body: JSON.stringify({ detail: "Invalid webhook signature" }) })
    for (
      const other of [
        `${server.url}/api/v1/telephony/twilio/status/999999999`,
        `${server.url}/api/v1/telephony/twilio/answer/999999999`,
        `${server.url}/api/v1/telephony/plivo/status/${attempt!.run_id}`,
        `${server.url}/api/v1/telephony/vonage/answer/${attempt!.run_id}`
      ]
    ) expect(await refusal(other)).toEqual(badSignature)
  })

  it("applies a call's callbacks that arrive before the carrier's reply to placing it, once that reply names the call", async () => {
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, carrier)
    const [answered, failed] = numbersFrom("+1415205", 2) as [string, string]
    scripts.set(answered, [{ outcome: "completed", ringMs: 10, talkMs: 20, replyDelayMs: 1500 }])
    scripts.set(failed, [{ outcome: "failed", ringMs: 10, replyDelayMs: 1500 }])
    const id = await startedCampaign(server, api, account, contactsCsv([answered, failed]))
    const campaign = await eventually(
      async () => {
        const current = await campaignOf(id, account.token)
        return current.state === "completed" ? current : undefined
      },
      20_000,
      "completed"
    )
    expect(campaign).toMatchObject({ processed_rows: 2, failed_rows: 1 })
    // The failed call's final callback was sent long before the carrier answered its creation.
    const failedCall = callsTo([failed])[0]!
    expect(failedCall.endedAt! - failedCall.createdAt).toBeLessThan(1000)
    const attempts = await query<
      { phone_number: string; end_reason: string; provider_call_id: string; answered: boolean }
    >((sql) =>
      sql`SELECT c.phone_number, a.end_reason, a.provider_call_id, a.answered_at IS NOT NULL AS answered
          FROM campaign_attempts a JOIN campaign_contacts c ON c.id = a.contact_id WHERE a.campaign_id = ${id} ORDER BY c.phone_number`
    )
    expect(attempts).toEqual([
      {
        phone_number: answered,
        end_reason: "telephony_completed",
        provider_call_id: callsTo([answered])[0]!.id,
        answered: true
      },
      { phone_number: failed, end_reason: "telephony_failed", provider_call_id: failedCall.id, answered: false }
    ].sort((a, b) => a.phone_number.localeCompare(b.phone_number)))
    expect(carrier.callbackFailures()).toEqual([])
  })

  it("refuses a signed callback naming another run's call, even before the carrier's reply names this run's", async () => {
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, carrier)
    const [placed, pending] = numbersFrom("+1415206", 2) as [string, string]
    scripts.set(placed, [{ outcome: "silent" }])
    scripts.set(pending, [{ outcome: "lost", replyDelayMs: 2500 }])
    const id = await startedCampaign(server, api, account, contactsCsv([placed, pending]))
    const [other, waiting] = await eventually(
      async () => {
        const [first, second] = [callsTo([placed])[0], callsTo([pending])[0]]
        return first && second ? [first, second] as const : undefined
      },
      10_000,
      "both calls placed"
    )
    const [attempt] = await query<{ run_id: number; provider_call_id: string | null }>((sql) =>
      sql`SELECT a.run_id, a.provider_call_id FROM campaign_attempts a JOIN campaign_contacts c ON c.id = a.contact_id
          WHERE a.campaign_id = ${id} AND c.phone_number = ${pending}`
    )
    // The carrier has not yet answered the request that placed this run's call.
    expect(attempt!.provider_call_id).toBeNull()
    const url = `${server.url}/api/v1/telephony/twilio/status/${attempt!.run_id}`
    await eventually(
      async () => {
        const [row] = await query<{ provider_call_id: string | null }>((sql) =>
          sql`SELECT provider_call_id FROM campaign_attempts WHERE provider_call_id = ${other.id}`
        )
        return row !== undefined
      },
      10_000,
      "the other call recorded"
    )
    const foreign = { AccountSid: carrier.accountSid, CallSid: other.id, CallStatus: "completed", CallDuration: "3" }
    const refused = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": twilioSignature(carrier.authToken, url, foreign)
      },
      body: new URLSearchParams(foreign).toString()
    })
    expect(refused.status).toBe(403)
    // The run keeps its own call once the carrier's reply names it.
    const [after] = await eventually(
      async () => {
        const rows = await query<{ provider_call_id: string | null }>((sql) =>
          sql`SELECT provider_call_id FROM campaign_attempts WHERE run_id = ${attempt!.run_id}`
        )
        return rows[0]?.provider_call_id ? rows : undefined
      },
      10_000,
      "placement recorded"
    )
    expect(after!.provider_call_id).toBe(waiting.id)
    for (const call of [other, waiting]) carrier.endCall(call.id)
  })

  it("never has more live calls than max_concurrency, and keeps to the rate in every one-second window", async () => {
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, carrier)
    const numbers = numbersFrom("+1415202", 12)
    for (const number of numbers) scripts.set(number, [{ outcome: "completed", ringMs: 50, talkMs: 400 }])
    const id = await startedCampaign(server, api, account, contactsCsv(numbers), {
      max_concurrency: 3,
      rate_limit_per_second: 5
    })
    await eventually(async () => (await campaignOf(id, account.token)).state === "completed", 30_000, "completed")
    const calls = callsTo(numbers)
    expect(calls).toHaveLength(12)
    const peakLive = Math.max(
      ...calls.map((call) =>
        calls.filter((other) => other.createdAt <= call.createdAt && (other.endedAt ?? Infinity) > call.createdAt)
          .length
      )
    )
    expect(peakLive).toBeLessThanOrEqual(3)
    const times = calls.map((call) => call.createdAt).sort((a, b) => a - b)
    const busiest = Math.max(
      ...times.map((start) => times.filter((time) => time >= start && time < start + 1000).length)
    )
    expect(busiest).toBeLessThanOrEqual(5)
  })

  it("stops dialling on pause, continues on resume, and on cancel lets live calls finish but calls nobody else", async () => {
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, carrier)
    const numbers = numbersFrom("+1415203", 10)
    for (const number of numbers) scripts.set(number, [{ outcome: "completed", ringMs: 20, talkMs: 600 }])
    const id = await startedCampaign(server, api, account, contactsCsv(numbers), {
      rate_limit_per_second: 2,
      circuit_breaker: { enabled: false }
    })
    const as = { token: account.token }
    await eventually(async () => callsTo(numbers).length >= 2, 10_000, "two calls placed")
    expect((await api.post(`/api/v1/campaign/${id}/pause`, undefined, as)).body.state).toBe("paused")
    const atPause = callsTo(numbers).length
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(callsTo(numbers).length).toBe(atPause)

    expect((await api.post(`/api/v1/campaign/${id}/resume`, undefined, as)).body.state).toBe("running")
    await eventually(async () => callsTo(numbers).length >= atPause + 2, 10_000, "dialling again")
    expect((await api.post(`/api/v1/campaign/${id}/cancel`, undefined, as)).body.state).toBe("cancelled")
    const atCancel = callsTo(numbers).length
    await eventually(
      async () => {
        const [live] = await query<{ live: number }>((sql) =>
          sql`SELECT count(*)::int AS live FROM campaign_attempts WHERE campaign_id = ${id} AND ended_at IS NULL`
        )
        return live!.live === 0
      },
      10_000,
      "live calls finished"
    )
    await new Promise((resolve) => setTimeout(resolve, 800))
    expect(callsTo(numbers).length).toBe(atCancel)
    const campaign = await campaignOf(id, account.token)
    const progress = (await api.get(`/api/v1/campaign/${id}/progress`, as)).body
    expect(campaign.state).toBe("cancelled")
    expect(campaign.executed_count).toBe(atCancel)
    expect(campaign.processed_rows).toBe(atCancel)
    expect(progress).toMatchObject({ cancelled: 10 - atCancel, pending: 0, dialing: 0, live_calls: 0 })
  })
})

describe.each(carrierProviders.map((provider, index) => ({ provider, index })))(
  "a lost call through $provider",
  ({ provider, index }) => {
    it("is reconciled once its deadline passes: the carrier is asked about it and it is hung up, freeing its slot", async () => {
      const standIn = standIns.get(provider)!
      const account = await newAccount(api)
      await carrierTelephony(api, { token: account.token }, standIn)
      const numbers = numbersFrom(`+1415${220 + index}`, 2)
      scripts.set(numbers[0]!, [{ outcome: "silent" }])
      const id = await startedCampaign(server, api, account, contactsCsv(numbers), { max_concurrency: 1 })
      const campaign = await eventually(
        async () => {
          const current = await campaignOf(id, account.token)
          return current.state === "completed" ? current : undefined
        },
        20_000,
        "completed"
      )
      expect(campaign).toMatchObject({ processed_rows: 2, failed_rows: 1, executed_count: 2 })
      const silent = callsTo([numbers[0]!], standIn)[0]!
      expect(silent.hungUpByApi).toBe(true)
      expect(silent.status).toBe("canceled")
      const [attempt] = await query<{ outcome: string; end_reason: string }>((sql) =>
        sql`SELECT a.outcome, a.end_reason FROM campaign_attempts a JOIN campaign_contacts c ON c.id = a.contact_id
          WHERE a.campaign_id = ${id} AND c.phone_number = ${numbers[0]!}`
      )
      expect(["failed", "canceled"]).toContain(attempt!.outcome)
    })
  }
)
