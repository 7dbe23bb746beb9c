import { Context, type Effect } from "effect"
import type { NotFound } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { QualityReviewView } from "../src/quality/reviewView.ts"

/** A run as v2 shows it: one call or chat of an agent, with its results. */
export interface ConversationView {
  readonly id: number
  readonly agent_id: number
  readonly agent_version: number | null
  readonly channel: "telephony" | "web" | "chat"
  readonly mode: string
  readonly direction: "inbound" | "outbound"
  readonly status: "initialized" | "running" | "completed" | "failed"
  readonly caller_number: string | null
  readonly called_number: string | null
  readonly campaign_id: number | null
  readonly started_at: Date | null
  readonly ended_at: Date | null
  readonly duration_seconds: number
  readonly disposition: string | null
  readonly end_reason: string | null
  readonly initial_context: Readonly<Record<string, unknown>>
  readonly gathered_context: Readonly<Record<string, unknown>>
  readonly transcript: ReadonlyArray<Readonly<Record<string, unknown>>>
  /** Voice: caller stops speaking → first agent audio, over the run's turns (null for chats and calls without turns). */
  readonly latency: { readonly p50_ms: number | null; readonly p90_ms: number | null }
  readonly usage: {
    readonly prompt_tokens: number
    readonly completion_tokens: number
    readonly service_tokens: number
    readonly tts_characters: number
    readonly stt_seconds: number
  }
  /** The run's quality review; null when its agent does not review runs. */
  readonly quality_review: QualityReviewView | null
  readonly created_at: Date
}

/** Read access to runs as conversations, scoped to the caller's organization. */
export interface ConversationsShape {
  /** An agent's conversations, newest first; NotFound when the agent is not the caller's. */
  readonly listForAgent: (
    principal: Principal,
    agentId: number,
    page: number,
    pageSize: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<ConversationView>; readonly total: number }, NotFound>
  readonly get: (principal: Principal, conversationId: number) => Effect.Effect<ConversationView, NotFound>
}

export class Conversations extends Context.Tag("talkgraph/Conversations")<Conversations, ConversationsShape>() {}
