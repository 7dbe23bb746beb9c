import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { SessionRef, SessionView } from "../../services/ChatSessions.ts"
import type { StoredConversation } from "../../services/ConversationStarts.ts"
import type { ConversationState } from "../../src/conversation/conversationState.ts"
import { serviceTokens, type TokenUsage, type TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { OrganizationId, RunId, WorkflowId } from "../../src/domain/ids.ts"
import { channelOfMode } from "../../src/usage/channels.ts"

/** A session held by one process for one step (a message, an ending). */
export interface ClaimedRun {
  readonly id: RunId
  readonly organization_id: OrganizationId
  readonly definition_id: number | null
  readonly conversation: StoredConversation
  readonly transcript: ReadonlyArray<TranscriptTurn>
  readonly started_at: Date
  readonly disposition_codes: ReadonlyArray<string>
}

/** How long a claim holds without renewal; a crashed holder blocks a session at most this long. */
export const LEASE_SECONDS = 30

interface ViewRow {
  readonly id: RunId
  readonly workflow_id: WorkflowId
  readonly definition_id: number | null
  readonly version_number: number | null
  readonly state: SessionView["state"]
  readonly node_id: string | null
  readonly end_reason: string | null
  readonly error: string | null
  readonly transcript: ReadonlyArray<TranscriptTurn>
  readonly initial_context: Record<string, unknown>
  readonly gathered_context: Record<string, unknown>
  readonly extracted_variables: Record<string, unknown> | null
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly created_at: Date
  readonly started_at: Date | null
  readonly ended_at: Date | null
}

export const toSessionView = (row: ViewRow): SessionView => ({
  workflow_run_id: row.id,
  workflow_id: row.workflow_id,
  definition_id: row.definition_id,
  version_number: row.version_number,
  state: row.state,
  node_id: row.node_id,
  end_reason: row.end_reason,
  error: row.error,
  transcript: row.transcript,
  initial_context: row.initial_context,
  gathered_context: row.gathered_context,
  extracted_variables: row.extracted_variables ?? {},
  usage: {
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    // The column is settled only when the chat ends (see commitTurn); it is always this sum.
    service_tokens: serviceTokens(row)
  },
  created_at: row.created_at,
  started_at: row.started_at,
  ended_at: row.ended_at
})

/** Session state as the claim left it: why a claim failed. */
interface SessionStatus {
  readonly state: SessionView["state"]
  readonly end_reason: string | null
}

/** A database failure here is not the caller's to handle: it becomes a defect (logged, 500). */
const dying =
  <Args extends ReadonlyArray<unknown>, A, E, R>(query: (...args: Args) => Effect.Effect<A, E, R>) =>
  (...args: Args): Effect.Effect<A, never, R> => Effect.orDie(query(...args))

export const makeChatRunRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const summaryColumns = `
    id, workflow_id, definition_id, version_number, state, conversation->'state'->>'node_id' AS node_id,
    end_reason, error, initial_context, gathered_context, conversation->'state'->'extracted' AS extracted_variables,
    prompt_tokens, completion_tokens,
    created_at, started_at, ended_at`
  const viewColumns = sql.literal(`${summaryColumns}, transcript`)
  /** All but the transcript: a step's writer already holds it, so it is not read back. */
  const stepColumns = sql.literal(summaryColumns)

  const view = (organizationId: number, session: SessionRef) =>
    sql<ViewRow>`
      SELECT ${viewColumns} FROM runs
      WHERE id = ${session.runId} AND workflow_id = ${session.workflowId} AND organization_id = ${organizationId} AND channel = 'chat'`
      .pipe(
        Effect.map((rows) => (rows[0] ? toSessionView(rows[0]) : null))
      )

  const status = (organizationId: number, session: SessionRef) =>
    sql<SessionStatus>`
      SELECT state, end_reason FROM runs
      WHERE id = ${session.runId} AND workflow_id = ${session.workflowId} AND organization_id = ${organizationId} AND channel = 'chat'`
      .pipe(
        Effect.map((rows) => rows[0] ?? null)
      )

  /** A new running session, already claimed by `token` while the opening is produced. */
  const insert = (input: {
    readonly organizationId: OrganizationId
    readonly workflowId: WorkflowId
    readonly definitionId: number
    readonly versionNumber: number
    readonly initialContext: Readonly<Record<string, unknown>>
    readonly conversation: StoredConversation
    readonly token: string
    readonly mode: "textchat" | "testchat"
  }) =>
    sql<{ id: RunId; started_at: Date }>`
      INSERT INTO runs (organization_id, workflow_id, definition_id, version_number, name, channel, mode, direction, state,
                        initial_context, conversation, started_at, last_activity_at, idle_timeout_seconds,
                        max_duration_seconds, busy_until, busy_token)
      VALUES (${input.organizationId}, ${input.workflowId}, ${input.definitionId}, ${input.versionNumber},
              ${input.mode === "testchat" ? "Agent test" : "Text chat"}, ${
      channelOfMode(input.mode)
    }, ${input.mode}, 'inbound', 'running', ${JSON.stringify(input.initialContext)}::jsonb,
              ${
      JSON.stringify(input.conversation)
    }::jsonb, now(), now(), ${input.conversation.limits.idleTimeoutSeconds},
              ${input.conversation.limits.maxDurationSeconds}, now() + ${`${LEASE_SECONDS} seconds`}::interval, ${input.token})
      RETURNING id, started_at`.pipe(Effect.map((rows) => rows[0]!))

  const claimedColumns = sql.literal(`
    r.id, r.organization_id, r.definition_id, r.conversation, r.transcript, r.started_at,
    COALESCE(w.call_disposition_codes->'disposition_codes', '[]'::jsonb) AS disposition_codes`)

  /**
   * Takes the session for one step if it is running and nobody holds it. This conditional update
   * is what serializes messages across processes: of two concurrent claims exactly one matches.
   */
  const claim = (organizationId: number, session: SessionRef, token: string) =>
    sql<ClaimedRun>`
      UPDATE runs r SET busy_until = now() + ${`${LEASE_SECONDS} seconds`}::interval, busy_token = ${token}
      FROM workflows w
      WHERE r.id = ${session.runId} AND r.workflow_id = ${session.workflowId} AND r.organization_id = ${organizationId}
        AND r.channel = 'chat' AND r.state = 'running'
        AND (r.busy_until IS NULL OR r.busy_until < now()) AND w.id = r.workflow_id
      RETURNING ${claimedColumns}`.pipe(Effect.map((rows) => rows[0] ?? null))

  /** Live sessions past their idle timeout or maximum duration, claimed for ending. */
  const claimExpired = (token: string, limit: number) =>
    sql<ClaimedRun & { expired_by: "idle" | "duration" }>`
      UPDATE runs r SET busy_until = now() + ${`${LEASE_SECONDS} seconds`}::interval, busy_token = ${token}
      FROM workflows w
      WHERE w.id = r.workflow_id AND r.id IN (
        SELECT id FROM runs
        WHERE channel = 'chat' AND ended_at IS NULL AND state = 'running' AND (busy_until IS NULL OR busy_until < now())
          AND (last_activity_at + idle_timeout_seconds * interval '1 second' < now()
               OR started_at + max_duration_seconds * interval '1 second' < now())
        ORDER BY last_activity_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING ${claimedColumns},
        CASE WHEN r.started_at + r.max_duration_seconds * interval '1 second' < now() THEN 'duration' ELSE 'idle' END AS expired_by`

  const renew = (runId: number, token: string) =>
    sql`UPDATE runs SET busy_until = now() + ${`${LEASE_SECONDS} seconds`}::interval WHERE id = ${runId} AND busy_token = ${token}`

  const release = (runId: number, token: string) =>
    sql`UPDATE runs SET busy_until = NULL, busy_token = NULL WHERE id = ${runId} AND busy_token = ${token}`

  /**
   * Stores a completed step: appends its turns, moves the state, adds its tokens. Only what changed
   * is sent: the context, limits and any draft definition stay as stored. `history` is the
   * transcript as claimed. `keepClaim` holds the session for the ending that follows. Answers null
   * when the claim was lost (it lapsed), storing nothing.
   *
   * `service_tokens` is left alone until the run ends (`finish`): every change to it updates the
   * organization's daily usage rows (migration 0006's trigger), rows every live chat of the
   * organization shares, so writing it per message serialized concurrent chats on their locks.
   */
  const commitTurn = (input: {
    readonly runId: number
    readonly token: string
    readonly state: ConversationState
    readonly history: ReadonlyArray<TranscriptTurn>
    readonly turns: ReadonlyArray<TranscriptTurn>
    readonly usage: TokenUsage
    readonly keepClaim: boolean
  }) =>
    sql<Omit<ViewRow, "transcript">>`
      UPDATE runs SET
        transcript = transcript || ${JSON.stringify(input.turns)}::jsonb,
        conversation = jsonb_set(conversation, '{state}', ${JSON.stringify(input.state)}::jsonb),
        prompt_tokens = prompt_tokens + ${input.usage.prompt_tokens},
        completion_tokens = completion_tokens + ${input.usage.completion_tokens},
        last_activity_at = now(),
        updated_at = now(),
        busy_until = ${input.keepClaim ? sql`busy_until` : sql`NULL`},
        busy_token = ${input.keepClaim ? sql`busy_token` : sql`NULL`}
      WHERE id = ${input.runId} AND busy_token = ${input.token}
      RETURNING ${stepColumns}`.pipe(
      Effect.map((
        rows
      ) => (rows[0] ? toSessionView({ ...rows[0], transcript: [...input.history, ...input.turns] }) : null))
    )

  /** Ends the run: final state, reason, gathered context and disposition; the claim is released. */
  const finish = (input: {
    readonly runId: number
    readonly token: string
    readonly state: "completed" | "failed"
    readonly conversation: StoredConversation
    readonly endReason: string
    readonly error: string | null
    readonly gatheredContext: Readonly<Record<string, unknown>>
    readonly disposition: string
    readonly usage: TokenUsage
  }) =>
    sql<ViewRow>`
      UPDATE runs SET
        state = ${input.state},
        conversation = ${JSON.stringify(input.conversation)}::jsonb,
        end_reason = ${input.endReason},
        error = ${input.error},
        gathered_context = ${JSON.stringify(input.gatheredContext)}::jsonb,
        disposition = ${input.disposition},
        prompt_tokens = prompt_tokens + ${input.usage.prompt_tokens},
        completion_tokens = completion_tokens + ${input.usage.completion_tokens},
        service_tokens = prompt_tokens + completion_tokens + ${serviceTokens(input.usage)},
        ended_at = now(),
        duration_seconds = GREATEST(0, round(EXTRACT(EPOCH FROM now() - started_at)))::integer,
        updated_at = now(),
        busy_until = NULL,
        busy_token = NULL
      WHERE id = ${input.runId} AND busy_token = ${input.token}
      RETURNING ${viewColumns}`.pipe(Effect.map((rows) => (rows[0] ? toSessionView(rows[0]) : null)))

  return {
    view: dying(view),
    status: dying(status),
    insert: dying(insert),
    claim: dying(claim),
    claimExpired: dying(claimExpired),
    renew: dying(renew),
    release: dying(release),
    commitTurn: dying(commitTurn),
    finish: dying(finish)
  }
})

export type ChatRunRows = Effect.Effect.Success<typeof makeChatRunRows>
