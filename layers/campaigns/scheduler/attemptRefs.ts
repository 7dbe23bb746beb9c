import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"

/** What verifying a carrier callback needs of its attempt: fixed when the attempt is made. */
export interface AttemptRef {
  readonly id: number
  readonly organization_id: number
  readonly telephony_configuration_id: number | null
  readonly provider: string | null
}

/** Calls this process remembers at once; the oldest is forgotten first. */
const REMEMBERED = 20_000

/**
 * The attempt behind a run, read once and remembered: a call sends several callbacks (placed,
 * ringing, answered, the answer document, the end), and only the first needs the database to know
 * which credentials sign them. Any process may receive any of them; each remembers what it read,
 * and the dialer tells it each attempt as it hands it to the carrier, whose callbacks then need no read.
 */
export const makeAttemptRefs = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const remembered = new Map<number, AttemptRef>()

  /** Carrier call ids of attempts, once written: an attempt's id never changes after that. */
  const callIds = new Map<number, string>()

  const remember = (runId: number, callId: string) => {
    callIds.set(runId, callId)
    if (callIds.size > REMEMBERED) callIds.delete(callIds.keys().next().value!)
  }

  const rememberAttempt = (runId: number, attempt: AttemptRef) => {
    remembered.set(runId, attempt)
    if (remembered.size > REMEMBERED) remembered.delete(remembered.keys().next().value!)
  }

  /**
   * An attempt the dialer is about to hand to the carrier: its callbacks may come before the
   * carrier's reply is back (Twilio posts as it creates the call), and certainly before the call's
   * id is written, and what they need of the attempt is fixed already.
   */
  const dialing = (runId: number, attempt: AttemptRef) => Effect.sync(() => rememberAttempt(runId, attempt))

  /** A call the dialer placed and whose carrier id it wrote to the attempt. */
  const placed = (runId: number, attempt: AttemptRef, callId: string) =>
    Effect.sync(() => {
      rememberAttempt(runId, attempt)
      remember(runId, callId)
    })

  const of = (runId: number) =>
    Effect.suspend(() => {
      const known = remembered.get(runId)
      if (known) return Effect.succeed<AttemptRef | undefined>(known)
      // The call's id comes along: the dialer has usually written it from the placement's reply by now.
      return Effect.map(
        sql<AttemptRef & { readonly provider_call_id: string | null }>`
          SELECT id, organization_id, telephony_configuration_id, provider, provider_call_id
          FROM campaign_attempts WHERE run_id = ${runId}`,
        ([row]) => {
          if (!row) return undefined
          const { provider_call_id, ...attempt } = row
          rememberAttempt(runId, attempt)
          if (provider_call_id !== null) remember(runId, provider_call_id)
          return attempt
        }
      )
    })

  /**
   * The carrier's id of the call placed for a run's attempt, as a signed callback that names
   * `reported` finds it. The dialer writes it from the carrier's reply to the placement; a callback
   * can come first (Twilio posts as it creates the call) or alone (the dialer died before writing
   * it), and then the call it names becomes the attempt's, unless that call is already another
   * attempt's. Null when the attempt ended without a call (never placed).
   */
  const callOf = (runId: number, reported: string) =>
    Effect.gen(function*() {
      const known = callIds.get(runId)
      if (known !== undefined) return known
      const [bound] = yield* sql<{ provider_call_id: string }>`
        UPDATE campaign_attempts SET provider_call_id = ${reported}
        WHERE run_id = ${runId} AND provider_call_id IS NULL AND ended_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM campaign_attempts WHERE provider_call_id = ${reported})
        RETURNING provider_call_id`
      const [attempt] = bound
        ? [bound]
        : yield* sql<
          { provider_call_id: string | null }
        >`SELECT provider_call_id FROM campaign_attempts WHERE run_id = ${runId}`
      const callId = attempt?.provider_call_id ?? null
      if (callId !== null) remember(runId, callId)
      return callId
    })

  /** The call is over: its later callbacks (repeats) may read it again. */
  const forget = (runId: number) =>
    Effect.sync(() => {
      remembered.delete(runId)
      callIds.delete(runId)
    })

  return { of, callOf, forget, dialing, placed }
})

/** This process's memory of call attempts, shared by the dialer and the carrier callbacks. */
export class AttemptRefs extends Context.Tag("talkgraph/AttemptRefs")<
  AttemptRefs,
  Effect.Effect.Success<typeof makeAttemptRefs>
>() {}

export const AttemptRefsLive = Layer.effect(AttemptRefs, makeAttemptRefs)
