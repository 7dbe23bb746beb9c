import { Context, type Effect } from "effect"
import type { ConversationState, TurnOutcome } from "../src/conversation/conversationState.ts"
import type { Ending } from "../src/conversation/endReason.ts"
import type { ConversationLimits } from "../src/conversation/limits.ts"
import type { Context as RunContext } from "../src/conversation/runContext.ts"
import type { TokenUsage, TranscriptTurn } from "../src/conversation/transcript.ts"
import type { OrganizationId } from "../src/domain/ids.ts"
import type { WorkflowGraph } from "../src/graph/definition.ts"
import type { RunnableTool } from "../src/tools/toolRun.ts"
import type { TransferEndpoint } from "../src/tools/transferDestination.ts"
import type { LlmConnection } from "./LlmGenerator.ts"
import type { TransferOutcome } from "./Telephony.ts"

export type { TransferOutcome }

/** How a transfer went, and whether the caller is still on the line with the agent. */
export interface TransferResult {
  readonly outcome: TransferOutcome
  /**
   * The destination did not answer and the caller is still connected to the agent (the carrier's
   * transfer left the agent's media stream up); false once the agent has left or the call is over.
   */
  readonly callerStillHere: boolean
}

/** What the model can do to a live voice call itself (absent on text channels). */
export interface CallActions {
  /** Plays the keys into the call as DTMF tones, after the agent audio already queued; done once they are queued. */
  readonly sendDigits: (digits: string) => Effect.Effect<void>
  /**
   * The carrier rings `destination` for up to `timeoutSeconds` and connects the caller to it; the
   * agent leaves when it answers. Cold: the caller is handed over at once. Warm (`whisper`): the
   * caller stays with the agent while the destination rings and hears `whisper`, and is joined
   * with it only once it did. Absent where the call has no carrier (browser).
   */
  readonly transfer?: (
    destination: TransferEndpoint,
    options: { readonly timeoutSeconds: number; readonly whisper?: string }
  ) => Effect.Effect<TransferResult>
}

/** Everything fixed for one run: the graph it follows, its variables, its model and its limits. */
export interface ConversationPlan {
  readonly graph: WorkflowGraph
  readonly context: RunContext
  readonly connection: LlmConnection
  /**
   * The connection's model is a fallback chosen because the first model failed: it is used at every
   * node, over a node's own `llm_model` (which is the model that may be down).
   */
  readonly fallbackModel?: boolean | undefined
  readonly limits: ConversationLimits
  readonly dispositionCodes: ReadonlyArray<string>
  /**
   * What a text channel says in place of each recorded clip the run may play (audio greeting,
   * greeting override, audio transition speech): the clip's transcript, else its label.
   */
  readonly recordingTexts?: ReadonlyMap<string, string> | undefined
  /**
   * Voice: after this long without a tool's answer the agent says the tool's filler line, so the
   * caller does not hear dead air. Text channels set none.
   */
  readonly toolFillerAfterMs?: number | undefined
  /** Voice: the call the conversation is on. */
  readonly callActions?: CallActions | undefined
  /** The library tools the graph's nodes name that may run, by `tool_uuid`, and whose they are. */
  readonly tools?: {
    readonly organizationId: OrganizationId
    readonly byUuid: ReadonlyMap<string, RunnableTool>
  } | undefined
  /**
   * The workflow offers `add_to_do_not_call`: whose list it adds to, and the number it adds (a phone
   * call's other party; none on text channels and test calls, where the tool adds nothing).
   */
  readonly doNotCall?: {
    readonly organizationId: OrganizationId
    readonly phoneNumber: string | null
  } | undefined
  /** Whose knowledge base `search_knowledge_base` searches, when the graph's nodes name documents. */
  readonly knowledge?: { readonly organizationId: OrganizationId } | undefined
}

/** Receives the agent's words as they are produced (a text channel sends them on; voice would speak them). */
export type Emit = (text: string, options?: EmitOptions) => Effect.Effect<void>

export interface EmitOptions {
  /**
   * The text is a whole utterance of its own (a tool's filler line): voice speaks it at once, not
   * held back to be joined with the words that follow it.
   */
  readonly whole?: boolean
}

export interface Conclusion {
  /** Extracted variables plus `call_disposition` and `mapped_call_disposition` (and `error` for failures). */
  readonly gatheredContext: Readonly<Record<string, unknown>>
  readonly disposition: string
  readonly usage: TokenUsage
}

/**
 * The channel-agnostic graph runtime. It holds no state of its own: each step takes the stored
 * state and returns the next one, so a channel persists the outcome only once a step completes.
 * Interrupting a step (the user barged in, the client went away) therefore leaves the stored
 * conversation exactly as it was. Model failures are outcomes that end the run, never errors.
 */
export interface ConversationEngineShape {
  /** The opening: the greeting (or the model's first words when there is none). */
  readonly open: (plan: ConversationPlan, emit: Emit) => Effect.Effect<TurnOutcome>
  /** Answers one user message, following edges the model chooses. */
  readonly respond: (
    plan: ConversationPlan,
    state: ConversationState,
    history: ReadonlyArray<TranscriptTurn>,
    userText: string,
    emit: Emit
  ) => Effect.Effect<TurnOutcome>
  /** The post-run step: extraction at the final node and the disposition, for `gathered_context`. */
  readonly conclude: (
    plan: ConversationPlan,
    state: ConversationState,
    history: ReadonlyArray<TranscriptTurn>,
    ending: Ending
  ) => Effect.Effect<Conclusion>
}

export class ConversationEngine extends Context.Tag("talkgraph/ConversationEngine")<
  ConversationEngine,
  ConversationEngineShape
>() {}
