import { Clock, Duration, Effect } from "effect"
import type { KnowledgeBaseShape } from "../../services/KnowledgeBase.ts"
import {
  AUTO_RETRIEVAL_BUDGET_MS,
  FULL_TEXT_AFTER_MS,
  knowledgeContextText
} from "../../src/conversation/knowledgeRetrieval.ts"
import { KNOWLEDGE_PASSAGES, sourceOf } from "../../src/conversation/knowledgeTool.ts"
import type { KnowledgeRetrieval } from "../../src/conversation/transcript.ts"

/** A search's record for the transcript, and what the model is told (null: nothing, the search failed). */
export interface AutoRetrieval {
  readonly record: KnowledgeRetrieval
  readonly context: string | null
}

/**
 * The search a `knowledge_retrieval: "auto"` node makes with the caller's words before the model
 * answers. It must fit the turn: a slow embeddings endpoint is raced by a full-text search after
 * `FULL_TEXT_AFTER_MS`, and past `AUTO_RETRIEVAL_BUDGET_MS` the model answers without passages
 * (logged) rather than leave the caller in silence.
 */
export const makeAutoRetrieval = (knowledge: KnowledgeBaseShape) =>
  Effect.fn("ConversationEngine.autoRetrieval")(
    function*(organizationId: number, text: string, documentUuids: ReadonlyArray<string>) {
      const query = text.trim().slice(0, 2000)
      const started = yield* Clock.currentTimeMillis
      const search = (fullTextOnly: boolean) =>
        knowledge.search(organizationId, {
          query,
          limit: KNOWLEDGE_PASSAGES,
          document_uuids: documentUuids,
          full_text_only: fullTextOnly
        }).pipe(Effect.map((result) => ({ result, hedged: fullTextOnly })))
      const found = yield* Effect.race(search(false), Effect.delay(search(true), Duration.millis(FULL_TEXT_AFTER_MS)))
        .pipe(Effect.timeout(Duration.millis(AUTO_RETRIEVAL_BUDGET_MS)), Effect.either)
      const latency = (yield* Clock.currentTimeMillis) - started
      if (found._tag === "Left") {
        const timedOut = found.left._tag === "TimeoutException"
        yield* Effect.logWarning(
          timedOut
            ? "Automatic knowledge retrieval did not answer within the turn's budget; the model answers without passages"
            : "Automatic knowledge retrieval failed; the model answers without passages"
        ).pipe(Effect.annotateLogs({ latency_ms: latency, budget_ms: AUTO_RETRIEVAL_BUDGET_MS }))
        return {
          record: { query, status: timedOut ? "timeout" : "error", retrieval: null, latency_ms: latency, sources: [] },
          context: null
        } satisfies AutoRetrieval
      }
      const { hedged, result } = found.right
      if (hedged) {
        yield* Effect.logInfo("Automatic knowledge retrieval answered from full text: the embeddings were too slow")
          .pipe(Effect.annotateLogs({ latency_ms: latency }))
      }
      return {
        record: {
          query,
          status: "success",
          retrieval: result.retrieval,
          latency_ms: latency,
          sources: result.chunks.map(sourceOf)
        },
        context: knowledgeContextText(result)
      } satisfies AutoRetrieval
    }
  )
