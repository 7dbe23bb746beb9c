import { Context, type Effect } from "effect"
import type { AgentOverrides } from "../src/conversation/agentOverrides.ts"
import type { ConversationState } from "../src/conversation/conversationState.ts"
import type { ConversationLimits } from "../src/conversation/limits.ts"
import type { Context as RunContext } from "../src/conversation/runContext.ts"
import type { Conflict, NotFound, ValidationFailed } from "../src/domain/errors.ts"
import type { WorkflowId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { WorkflowGraph } from "../src/graph/definition.ts"
import type { ConversationPlan } from "./ConversationEngine.ts"
import type { LlmConnection } from "./LlmGenerator.ts"

/** `runs.conversation`: a run's place in the graph plus what was fixed when it started. */
export interface StoredConversation {
  readonly state: ConversationState
  readonly context: RunContext
  readonly limits: ConversationLimits
  /** A draft can still be edited, so a run on a draft keeps the definition it started with. */
  readonly definition?: unknown
  /** The agent's own LLM model and temperature, TTS voice and STT language, fixed when it started. */
  readonly overrides?: AgentOverrides | undefined
  /** The workflow offers its agent `add_to_do_not_call` (`workflow_configurations.do_not_call_tool`). */
  readonly doNotCallTool?: boolean | undefined
}

/** A new conversation of a workflow, ready for its channel to store as a run. */
export interface PreparedStart {
  readonly workflowId: WorkflowId
  readonly definitionId: number
  readonly versionNumber: number
  readonly graph: WorkflowGraph
  readonly conversation: StoredConversation
  readonly dispositionCodes: ReadonlyArray<string>
}

/** The parts of a stored version a conversation starts from. */
export interface VersionContent {
  readonly workflow_definition: unknown
  readonly template_context_variables: Record<string, unknown> | null
  readonly workflow_configurations: Record<string, unknown> | null
}

/**
 * How every channel (text chat, browser test calls, carrier calls) starts a conversation: the
 * version it runs, the conversation it starts at, and the engine's plan for it.
 */
export interface ConversationStartsShape {
  /**
   * The workflow's published version (or its draft with `useDraft`), validated to run, and the
   * conversation at its start node. `channel` names what the caller starts in the refusal's words.
   */
  readonly prepare: (
    principal: Principal,
    workflowId: number,
    options: {
      readonly useDraft: boolean
      readonly initialContext: Readonly<Record<string, unknown>>
      readonly channel: "session" | "call"
    }
  ) => Effect.Effect<PreparedStart, NotFound | Conflict | ValidationFailed>
  /**
   * The conversation a run created elsewhere (a campaign call, an inbound call) starts with, at its
   * first media connection; none when its version has no graph, or when its pre-call fetch (made
   * when `organizationId` is given) failed and the agent refuses to start without it.
   */
  readonly conversationOf: (
    version: VersionContent,
    initialContext: Readonly<Record<string, unknown>>,
    organizationId?: number
  ) => Effect.Effect<StoredConversation | null>
  /** The organization's LLM, or Conflict saying how to set one. */
  readonly llmConnection: (organizationId: number) => Effect.Effect<LlmConnection, Conflict>
  /** The engine's plan for a run: its graph and conversation, with the texts of the clips it may play. */
  readonly plan: (
    organizationId: number,
    run: {
      readonly graph: WorkflowGraph
      readonly conversation: StoredConversation
      readonly dispositionCodes: ReadonlyArray<string>
      readonly connection: LlmConnection
      /** A phone call's other party (the callee of an outbound call, the caller of an inbound one). */
      readonly partyNumber?: string | null | undefined
    }
  ) => Effect.Effect<ConversationPlan>
}

export class ConversationStarts extends Context.Tag("talkgraph/ConversationStarts")<
  ConversationStarts,
  ConversationStartsShape
>() {}
