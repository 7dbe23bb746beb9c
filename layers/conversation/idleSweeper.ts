import { Effect } from "effect"
import * as crypto from "node:crypto"
import type { SessionView } from "../../services/ChatSessions.ts"
import type { Ending } from "../../src/conversation/endReason.ts"
import type { TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { ChatRunRows, ClaimedRun } from "./chatRunRows.ts"

const BATCH = 50

type EndClaimed = (
  run: ClaimedRun,
  token: string,
  ending: Ending,
  transcript?: ReadonlyArray<TranscriptTurn>
) => Effect.Effect<SessionView | null, never, never>

/**
 * One sweep: ends every live chat past its idle timeout or maximum duration. Runs in each process;
 * `FOR UPDATE SKIP LOCKED` plus the claim let processes share the work without ending a chat twice.
 */
export const sweepExpiredChats = (rows: ChatRunRows, endClaimed: EndClaimed) =>
  Effect.gen(function*() {
    for (;;) {
      const token = crypto.randomUUID()
      const expired = yield* rows.claimExpired(token, BATCH).pipe(Effect.orDie)
      if (expired.length === 0) return
      yield* Effect.forEach(
        expired,
        (run) =>
          endClaimed(run, token, {
            reason: run.expired_by === "duration" ? "max_duration_exceeded" : "idle_timeout",
            error: null
          }).pipe(
            Effect.catchAllCause((cause) =>
              Effect.logError("Ending an expired chat session failed", cause).pipe(
                Effect.annotateLogs("run_id", run.id)
              )
            )
          ),
        { concurrency: 4, discard: true }
      )
      if (expired.length < BATCH) return
    }
  }).pipe(Effect.withSpan("ChatSessions.sweepExpired"))
