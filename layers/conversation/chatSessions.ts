import { SqlClient } from "@effect/sql"
import { Clock, Effect, Exit, Layer, Schedule } from "effect"
import * as crypto from "node:crypto"
import { type ChatReply, ChatSessions, type NewSession, type SessionRef } from "../../services/ChatSessions.ts"
import { ConversationEngine, type ConversationPlan, type Emit } from "../../services/ConversationEngine.ts"
import { initialState, type TurnOutcome } from "../../src/conversation/conversationState.ts"
import { isFailure } from "../../src/conversation/endReason.ts"
import { durationExceeded, limitsFrom } from "../../src/conversation/limits.ts"
import { runContext } from "../../src/conversation/runContext.ts"
import { Conflict, NotFound, UpstreamFailed } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { llmTimeoutSeconds } from "../llm/llmTimeout.ts"
import { chatIdleTimeoutSeconds } from "./chatConfig.ts"
import { makeChatEnding } from "./chatEnding.ts"
import { makeChatPlans, runnableGraph } from "./chatPlans.ts"
import { type ClaimedRun, makeChatRunRows, type StoredConversation } from "./chatRunRows.ts"
import { makeClaimRenewals } from "./claimRenewals.ts"
import { sweepExpiredChats } from "./idleSweeper.ts"

interface VersionRow {
  readonly workflow_status: "active" | "archived"
  readonly definition_id: number
  readonly version_number: number
  readonly version_status: "draft" | "published" | "archived"
  readonly workflow_definition: unknown
  readonly template_context_variables: Record<string, unknown> | null
  readonly workflow_configurations: Record<string, unknown> | null
  readonly disposition_codes: ReadonlyArray<unknown>
}

const sessionNotFound = (session: SessionRef) => new NotFound({ resource: "Chat session", id: session.runId })

const replyOf = (outcome: TurnOutcome) =>
  outcome.turns.filter((turn) => turn.role === "assistant").map((turn) => turn.text).join("\n")

export const ChatSessionsLive = Layer.scoped(
  ChatSessions,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const engine = yield* ConversationEngine
    const rows = yield* makeChatRunRows
    const plans = yield* makeChatPlans
    const { endClaimed } = yield* makeChatEnding(rows, plans)
    const defaults = { llmTimeoutSeconds: yield* llmTimeoutSeconds, idleTimeoutSeconds: yield* chatIdleTimeoutSeconds }

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
        return { ...view, reply: replyOf(outcome) } satisfies ChatReply
      })

    const loadVersion = (principal: Principal, workflowId: number, useDraft: boolean) =>
      Effect.gen(function*() {
        const found = yield* sql<VersionRow>`
          SELECT w.status AS workflow_status, d.id AS definition_id, d.version_number, d.version_status,
                 d.workflow_definition, d.template_context_variables, d.workflow_configurations,
                 COALESCE(w.call_disposition_codes->'disposition_codes', '[]'::jsonb) AS disposition_codes
          FROM workflows w JOIN workflow_definitions d ON d.workflow_id = w.id
          WHERE w.id = ${workflowId} AND w.organization_id = ${principal.organizationId}
            AND d.version_status IN ('draft', 'published')`.pipe(Effect.orDie)
        if (found.length === 0) {
          const [exists] =
            yield* sql`SELECT 1 FROM workflows WHERE id = ${workflowId} AND organization_id = ${principal.organizationId}`
              .pipe(Effect.orDie)
          if (!exists) return yield* Effect.fail(new NotFound({ resource: "Workflow", id: workflowId }))
          return yield* Effect.fail(new Conflict({ message: "This workflow has no published version to chat with" }))
        }
        if (found[0]!.workflow_status === "archived") {
          return yield* Effect.fail(new Conflict({ message: "This workflow is archived" }))
        }
        const draft = found.find((row) => row.version_status === "draft")
        const published = found.find((row) => row.version_status === "published")
        const version = useDraft ? draft ?? published : published
        if (!version) {
          return yield* Effect.fail(
            new Conflict({
              message: "This workflow has no published version yet: publish it, or start the session with use_draft"
            })
          )
        }
        return version
      })

    const create = Effect.fn("ChatSessions.create")(
      function*(principal: Principal, workflowId: number, input: NewSession, emit: Emit) {
        const version = yield* loadVersion(principal, workflowId, input.use_draft === true)
        const graph = yield* runnableGraph(version.workflow_definition)
        const start = graph.nodes.find((node) => node.type === "startCall")!
        const connection = yield* plans.connectionFor(principal.organizationId)
        const initialContext = input.initial_context ?? {}
        const conversation: StoredConversation = {
          state: initialState(start.id),
          context: runContext(version.template_context_variables, initialContext),
          limits: limitsFrom(version.workflow_configurations, defaults),
          ...(version.version_status === "draft" ? { definition: version.workflow_definition } : {})
        }
        const token = crypto.randomUUID()
        const inserted = yield* rows.insert({
          organizationId: principal.organizationId,
          workflowId,
          definitionId: version.definition_id,
          versionNumber: version.version_number,
          initialContext,
          conversation,
          token
        })
        if (version.version_status !== "draft") plans.cacheGraph(version.definition_id, graph)
        yield* Effect.annotateCurrentSpan({ run_id: inserted.id, workflow_id: workflowId })
        const plan: ConversationPlan = {
          graph,
          context: conversation.context,
          connection,
          limits: conversation.limits,
          dispositionCodes: version.disposition_codes.filter((code): code is string => typeof code === "string"),
          recordingTexts: yield* plans.recordingTextsFor(principal.organizationId, graph, conversation.context)
        }
        const run: ClaimedRun = {
          id: inserted.id,
          organization_id: principal.organizationId,
          definition_id: version.definition_id,
          conversation,
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
      const view = yield* rows.view(principal.organizationId, session)
      return view ?? (yield* Effect.fail(sessionNotFound(session)))
    })

    const end = Effect.fn("ChatSessions.end")(function*(principal: Principal, session: SessionRef) {
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
      Effect.repeat(Schedule.spaced(`${Math.min(15, Math.max(0.25, defaults.idleTimeoutSeconds / 4))} seconds`)),
      Effect.forkScoped
    )

    return ChatSessions.of({ create, get, send, end })
  })
)
