import { Effect } from "effect"
import type { SessionView } from "../../services/ChatSessions.ts"
import { type Conclusion, ConversationEngine } from "../../services/ConversationEngine.ts"
import type { ConversationState } from "../../src/conversation/conversationState.ts"
import { acceptDisposition } from "../../src/conversation/disposition.ts"
import { type Ending, isFailure } from "../../src/conversation/endReason.ts"
import { noUsage, type TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { makeChatPlans } from "./chatPlans.ts"
import type { ChatRunRows, ClaimedRun } from "./chatRunRows.ts"

type ChatPlans = Effect.Effect.Success<typeof makeChatPlans>

/** Ends claimed sessions: the post-run step, then the final row. Shared by the chat API and the sweeper. */
export const makeChatEnding = (rows: ChatRunRows, plans: ChatPlans) =>
  Effect.map(ConversationEngine, (engine) => {
    /** Without a plan (the LLM settings were removed) the run still ends, with what it has. */
    const bareConclusion = (state: ConversationState, ending: Ending): Conclusion => {
      const disposition = acceptDisposition([], ending.reason, undefined)
      return {
        gatheredContext: { ...state.extracted, ...disposition, ...(ending.error ? { error: ending.error } : {}) },
        disposition: disposition.mapped_call_disposition,
        usage: noUsage
      }
    }

    /**
     * Runs to the end once begun: a client going away must not leave a run half-ended. Answers null
     * only if the claim was lost meanwhile (the row is then someone else's to end).
     */
    const endClaimed = (
      run: ClaimedRun,
      token: string,
      ending: Ending,
      transcript: ReadonlyArray<TranscriptTurn> = run.transcript
    ) =>
      Effect.gen(function*() {
        const state = run.conversation.state
        const plan = yield* plans.planFor(run).pipe(Effect.option)
        const conclusion = plan._tag === "Some"
          ? yield* engine.conclude(plan.value, state, transcript, ending)
          : bareConclusion(state, ending)
        const view: SessionView | null = yield* rows.finish({
          runId: run.id,
          token,
          state: isFailure(ending.reason) ? "failed" : "completed",
          conversation: run.conversation,
          endReason: ending.reason,
          error: ending.error,
          gatheredContext: conclusion.gatheredContext,
          disposition: conclusion.disposition,
          usage: conclusion.usage
        })
        return view
      }).pipe(
        Effect.uninterruptible,
        Effect.withSpan("ChatSessions.end", {
          attributes: { run_id: run.id, organization_id: run.organization_id, reason: ending.reason }
        })
      )

    return { endClaimed }
  })
