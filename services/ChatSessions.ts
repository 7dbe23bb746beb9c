import { Context, type Effect } from "effect"
import type { ChatReply, ChatSession } from "../src/conversation/chatSessionRecord.ts"
import type { Conflict, NotFound, UpstreamFailed, ValidationFailed } from "../src/domain/errors.ts"
import type { RunId, WorkflowId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { Emit } from "./ConversationEngine.ts"

/** A session and a reply are defined once, in src/conversation/chatSessionRecord.ts. */
export type SessionView = ChatSession
export type { ChatReply }

/** A session as addressed in the API: under its workflow (under another one it does not exist). */
export interface SessionRef {
  readonly workflowId: WorkflowId
  readonly runId: RunId
}

export interface NewSession {
  readonly initial_context?: Readonly<Record<string, unknown>> | undefined
  /** Run the draft version (for testing an agent before publishing). */
  readonly use_draft?: boolean | undefined
  /** A simulated caller's conversation (agent tests): recorded as mode `testchat`, billed as a test run. */
  readonly test?: boolean | undefined
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
