import { Clock, Effect, Exit, Layer, Schedule } from "effect"
import * as crypto from "node:crypto"
import { type ChatReply, ChatSessions, type NewSession, type SessionRef } from "../../services/ChatSessions.ts"
import { ConversationEngine, type Emit } from "../../services/ConversationEngine.ts"
import { ConversationStarts, type StoredConversation } from "../../services/ConversationStarts.ts"
import type { TurnOutcome } from "../../src/conversation/conversationState.ts"
import { isFailure } from "../../src/conversation/endReason.ts"
import { durationExceeded } from "../../src/conversation/limits.ts"
import { Conflict, NotFound, UpstreamFailed } from "../../src/domain/errors.ts"
import type { WorkflowId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { chatIdleTimeoutSeconds } from "./chatConfig.ts"
import { makeChatEnding } from "./chatEnding.ts"
import { makeChatPlans } from "./chatPlans.ts"
import { type ClaimedRun, makeChatRunRows } from "./chatRunRows.ts"
import { makeClaimRenewals } from "./claimRenewals.ts"
import { sweepExpiredChats } from "./idleSweeper.ts"

const sessionNotFound = (session: SessionRef) => new NotFound({ resource: "Chat session", id: session.runId })

/** What a trace viewer shows of a chat session on each of its steps. */
const sessionAttributes = (principal: Principal, session: SessionRef) => ({
  run_id: session.runId,
  workflow_id: session.workflowId,
  organization_id: principal.organizationId
})

const replyOf = (outcome: TurnOutcome) =>
  outcome.turns.filter((turn) => turn.role === "assistant" && turn.text !== "").map((turn) => turn.text).join("\n")

export const ChatSessionsLive = Layer.scoped(
  ChatSessions,
  Effect.gen(function*() {
    const engine = yield* ConversationEngine
    const starts = yield* ConversationStarts
    const rows = yield* makeChatRunRows
    const plans = yield* makeChatPlans
    const { endClaimed } = yield* makeChatEnding(rows, plans)
    const idleTimeoutSeconds = yield* chatIdleTimeoutSeconds

    const renewals = yield* makeClaimRenewals(rows.renew)

    /**
     * Holds the claim while `effect` runs: renewed so a long reply keeps it, released whenever the
     * step does not complete (a failure, or an interruption such as the client going away).
     */
    const holdingClaim = <A, E, R>(runId: number, token: string, effect: Effect.Effect<A, E, R>) =>
      renewals.hold(runId, token, effect).pipe(
        Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : rows.release(runId, token)))
      )

    /** Stores a completed engine step; ends the run when the step ended it. Not interruptible once begun. */
    const store = (run: ClaimedRun, token: string, outcome: TurnOutcome) =>
      Effect.gen(function*() {
        const conversation: StoredConversation = { ...run.conversation, state: outcome.state }
        const committed = yield* rows.commitTurn({
          runId: run.id,
          token,
          state: outcome.state,
          history: run.transcript,
          turns: outcome.turns,
          usage: outcome.usage,
          keepClaim: outcome.ending !== null
        })
        if (!committed) {
          return yield* Effect.fail(
            new Conflict({ message: "The chat session was taken over while answering; send the message again" })
          )
        }
        if (outcome.ending === null) return committed
        const ended = yield* endClaimed({ ...run, conversation }, token, outcome.ending, [
          ...run.transcript,
          ...outcome.turns
        ])
        return ended ?? committed
      }).pipe(Effect.uninterruptible)

    const answer = (run: ClaimedRun, token: string, outcome: TurnOutcome) =>
      Effect.gen(function*() {
        const view = yield* store(run, token, outcome)
        if (outcome.ending && isFailure(outcome.ending.reason)) {
          return yield* Effect.fail(
            new UpstreamFailed({ message: `${outcome.ending.error} The chat session has ended.` })
          )
        }
        return { ...view, reply: replyOf(outcome), tool_calls: outcome.toolCalls } satisfies ChatReply
      })

    const create = Effect.fn("ChatSessions.create")(
      function*(principal: Principal, workflowId: WorkflowId, input: NewSession, emit: Emit) {
        const initialContext = input.initial_context ?? {}
        const start = yield* starts.prepare(principal, workflowId, {
          useDraft: input.use_draft === true,
          initialContext,
          channel: "session"
        })
        const connection = yield* starts.llmConnection(principal.organizationId)
        const token = crypto.randomUUID()
        const inserted = yield* rows.insert({
          organizationId: principal.organizationId,
          workflowId,
          definitionId: start.definitionId,
          versionNumber: start.versionNumber,
          initialContext,
          conversation: start.conversation,
          token,
          mode: input.test === true ? "testchat" : "textchat"
        })
        if (start.conversation.definition === undefined) plans.cacheGraph(start.definitionId, start.graph)
        yield* Effect.annotateCurrentSpan(sessionAttributes(principal, { workflowId, runId: inserted.id }))
        const plan = yield* starts.plan(principal.organizationId, { ...start, connection })
        const run: ClaimedRun = {
          id: inserted.id,
          organization_id: principal.organizationId,
          definition_id: start.definitionId,
          conversation: start.conversation,
          transcript: [],
          started_at: inserted.started_at,
          disposition_codes: plan.dispositionCodes
        }
        return yield* holdingClaim(
          run.id,
          token,
          engine.open(plan, emit).pipe(Effect.flatMap((outcome) => answer(run, token, outcome)))
        )
      }
    )

    /** Why a claim failed: the session does not exist here, has ended, or is answering another message. */
    const refusal = (principal: Principal, session: SessionRef) =>
      rows.status(principal.organizationId, session).pipe(
        Effect.flatMap((status) =>
          Effect.fail(
            status === null
              ? sessionNotFound(session)
              : status.state !== "running"
              ? new Conflict({ message: `This chat session has ended (${status.end_reason ?? status.state})` })
              : new Conflict({
                message:
                  "Another message to this chat session is still being answered; send the next one when it completes"
              })
          )
        )
      )

    const send = Effect.fn("ChatSessions.send")(
      function*(principal: Principal, session: SessionRef, text: string, emit: Emit) {
        yield* Effect.annotateCurrentSpan(sessionAttributes(principal, session))
        const token = crypto.randomUUID()
        const run = yield* rows.claim(principal.organizationId, session, token)
        if (!run) return yield* refusal(principal, session)
        return yield* holdingClaim(
          run.id,
          token,
          Effect.gen(function*() {
            if (durationExceeded(run.conversation.limits, run.started_at.getTime(), yield* Clock.currentTimeMillis)) {
              yield* endClaimed(run, token, { reason: "max_duration_exceeded", error: null })
              return yield* Effect.fail(
                new Conflict({ message: "This chat session has ended (max_duration_exceeded)" })
              )
            }
            const plan = yield* plans.planFor(run)
            const outcome = yield* engine.respond(plan, run.conversation.state, run.transcript, text, emit)
            return yield* answer(run, token, outcome)
          })
        )
      }
    )

    const get = Effect.fn("ChatSessions.get")(function*(principal: Principal, session: SessionRef) {
      yield* Effect.annotateCurrentSpan(sessionAttributes(principal, session))
      const view = yield* rows.view(principal.organizationId, session)
      return view ?? (yield* Effect.fail(sessionNotFound(session)))
    })

    const end = Effect.fn("ChatSessions.end")(function*(principal: Principal, session: SessionRef) {
      yield* Effect.annotateCurrentSpan(sessionAttributes(principal, session))
      const token = crypto.randomUUID()
      const run = yield* rows.claim(principal.organizationId, session, token)
      if (!run) {
        const view = yield* get(principal, session)
        if (view.state !== "running") return view
        return yield* Effect.fail(
          new Conflict({
            message: "A message to this chat session is still being answered; end it when the reply completes"
          })
        )
      }
      const ended = yield* holdingClaim(run.id, token, endClaimed(run, token, { reason: "user_ended", error: null }))
      return ended ?? (yield* get(principal, session))
    })

    yield* sweepExpiredChats(rows, endClaimed).pipe(
      Effect.catchAllCause((cause) => Effect.logError("Ending idle chat sessions failed", cause)),
      Effect.repeat(Schedule.spaced(`${Math.min(15, Math.max(0.25, idleTimeoutSeconds / 4))} seconds`)),
      Effect.forkScoped
    )

    return ChatSessions.of({ create, get, send, end })
  })
)
