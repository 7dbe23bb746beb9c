import { Context, type Effect } from "effect"
import type { ToolCallTaken } from "../src/conversation/conversationState.ts"
import type { TranscriptTurn } from "../src/conversation/transcript.ts"
import type { Conflict, NotFound, UpstreamFailed, ValidationFailed } from "../src/domain/errors.ts"
import type { RunId, WorkflowId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { Emit } from "./ConversationEngine.ts"

/** A text chat session: its run row as the chat API shows it. */
export interface SessionView {
  readonly workflow_run_id: RunId
  readonly workflow_id: WorkflowId
  readonly definition_id: number | null
  readonly version_number: number | null
  readonly state: "initialized" | "running" | "completed" | "failed"
  /** The graph node the conversation is at. */
  readonly node_id: string | null
  readonly end_reason: string | null
  readonly error: string | null
  readonly transcript: ReadonlyArray<TranscriptTurn>
  readonly initial_context: Readonly<Record<string, unknown>>
  readonly gathered_context: Readonly<Record<string, unknown>>
  /** The variables extracted so far, while the conversation goes on (gathered_context is settled at the end). */
  readonly extracted_variables: Readonly<Record<string, unknown>>
  readonly usage: {
    readonly prompt_tokens: number
    readonly completion_tokens: number
    readonly service_tokens: number
  }
  readonly created_at: Date
  readonly started_at: Date | null
  readonly ended_at: Date | null
}

/** The session after one exchange, with what the agent said in it and the tools it called. */
export interface ChatReply extends SessionView {
  readonly reply: string
  readonly tool_calls: ReadonlyArray<ToolCallTaken>
}

/** A session as addressed in the API: under its workflow (under another one it does not exist). */
export interface SessionRef {
  readonly workflowId: WorkflowId
  readonly runId: RunId
}

export interface NewSession {
  readonly initial_context?: Readonly<Record<string, unknown>> | undefined
  /** Run the draft version (for testing an agent before publishing). */
  readonly use_draft?: boolean | undefined
}

/**
 * The text chat channel over the conversation engine. Sessions live in the database, so any
 * process can answer any session; one message at a time per session, across all processes (a
 * second one while the first is answered gets Conflict). Idle sessions are ended by a sweeper.
 */
export interface ChatSessionsShape {
  /** Starts a run and answers with the agent's opening message. */
  readonly create: (
    principal: Principal,
    workflowId: WorkflowId,
    input: NewSession,
    emit: Emit
  ) => Effect.Effect<ChatReply, NotFound | Conflict | ValidationFailed | UpstreamFailed>
  readonly get: (principal: Principal, session: SessionRef) => Effect.Effect<SessionView, NotFound>
  /**
   * Answers one user message, streaming the agent's words through `emit`. A model failure ends the
   * run (recorded on it) and fails with UpstreamFailed.
   */
  readonly send: (
    principal: Principal,
    session: SessionRef,
    text: string,
    emit: Emit
  ) => Effect.Effect<ChatReply, NotFound | Conflict | UpstreamFailed>
  /** Ends the session (idempotent: an ended session is returned as it is). */
  readonly end: (principal: Principal, session: SessionRef) => Effect.Effect<SessionView, NotFound | Conflict>
}

export class ChatSessions extends Context.Tag("talkgraph/ChatSessions")<ChatSessions, ChatSessionsShape>() {}
