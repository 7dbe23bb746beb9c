import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

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
 * which credentials sign them. Any process may receive any of them; each remembers what it read.
 */
export const makeAttemptRefs = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const remembered = new Map<number, AttemptRef>()

  const of = (runId: number) =>
    Effect.suspend(() => {
      const known = remembered.get(runId)
      if (known) return Effect.succeed<AttemptRef | undefined>(known)
      return Effect.map(
        sql<AttemptRef>`
          SELECT id, organization_id, telephony_configuration_id, provider FROM campaign_attempts WHERE run_id = ${runId}`,
        ([attempt]) => {
          if (attempt) {
            remembered.set(runId, attempt)
            if (remembered.size > REMEMBERED) remembered.delete(remembered.keys().next().value!)
          }
          return attempt
        }
      )
    })

  /** Carrier call ids of attempts, once written: an attempt's id never changes after that. */
  const callIds = new Map<number, string>()

  /**
   * The carrier's id of the call placed for a run's attempt: null until the placement has been
   * answered and written, and for good once the attempt ended without one (never placed).
   */
  const placedCall = (runId: number) =>
    Effect.suspend(() => {
      const known = callIds.get(runId)
      if (known !== undefined) return Effect.succeed({ callId: known as string | null, ended: false })
      return Effect.map(
        sql<{ provider_call_id: string | null; ended: boolean }>`
          SELECT provider_call_id, ended_at IS NOT NULL AS ended FROM campaign_attempts WHERE run_id = ${runId}`,
        ([attempt]) => {
          const callId = attempt?.provider_call_id ?? null
          if (callId !== null) {
            callIds.set(runId, callId)
            if (callIds.size > REMEMBERED) callIds.delete(callIds.keys().next().value!)
          }
          return { callId, ended: attempt?.ended ?? true }
        }
      )
    })

  /** The call is over: its later callbacks (repeats) may read it again. */
  const forget = (runId: number) =>
    Effect.sync(() => {
      remembered.delete(runId)
      callIds.delete(runId)
    })

  return { of, placedCall, forget }
})
