import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { Conversations, type ConversationView } from "../../services/Conversations.ts"
import { NotFound } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { reviewViewOf } from "../../src/quality/reviewView.ts"
import { qualityReviewColumn } from "../quality/reviewColumns.ts"

interface ConversationRow
  extends Omit<ConversationView, "agent_id" | "agent_version" | "status" | "usage" | "latency" | "quality_review">
{
  readonly quality_review: unknown
  readonly latency_p50_ms: number | null
  readonly latency_p90_ms: number | null
  readonly workflow_id: number
  readonly version_number: number | null
  readonly state: ConversationView["status"]
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly service_tokens: number
  readonly tts_characters: number
  readonly stt_seconds: number
}

const toView = (row: ConversationRow): ConversationView => ({
  id: row.id,
  agent_id: row.workflow_id,
  agent_version: row.version_number,
  channel: row.channel,
  mode: row.mode,
  direction: row.direction,
  status: row.state,
  caller_number: row.caller_number,
  called_number: row.called_number,
  campaign_id: row.campaign_id,
  started_at: row.started_at,
  ended_at: row.ended_at,
  duration_seconds: row.duration_seconds,
  disposition: row.disposition,
  end_reason: row.end_reason,
  initial_context: row.initial_context,
  gathered_context: row.gathered_context,
  transcript: Array.isArray(row.transcript) ? row.transcript : [],
  latency: { p50_ms: row.latency_p50_ms, p90_ms: row.latency_p90_ms },
  usage: {
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    service_tokens: row.service_tokens,
    tts_characters: row.tts_characters,
    stt_seconds: row.stt_seconds
  },
  quality_review: reviewViewOf(row.quality_review),
  created_at: row.created_at
})

export const ConversationsLive = Layer.effect(
  Conversations,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // A live chat settles service_tokens when it ends (chatRunRows.ts); until then it is the running sum.
    const columns = sql.literal(`
      id, workflow_id, version_number, channel, mode, direction, state, caller_number, called_number, campaign_id,
      started_at, ended_at, duration_seconds, disposition, end_reason, initial_context, gathered_context, transcript,
      prompt_tokens, completion_tokens, GREATEST(service_tokens, prompt_tokens + completion_tokens) AS service_tokens,
      tts_characters, stt_seconds, latency_p50_ms, latency_p90_ms, created_at, ${qualityReviewColumn("runs")}`)

    const listForAgent = Effect.fn("Conversations.listForAgent")(
      function*(principal: Principal, agentId: number, page: number, pageSize: number) {
        const [agent] =
          yield* sql`SELECT 1 FROM workflows WHERE id = ${agentId} AND organization_id = ${principal.organizationId}`
        if (!agent) return yield* Effect.fail(new NotFound({ resource: "Agent", id: agentId }))
        // Runs carry their organization, and the agent was just checked to be the caller's.
        const [counted] = yield* sql<{ total: number }>`
        SELECT count(*)::integer AS total FROM runs WHERE workflow_id = ${agentId} AND organization_id = ${principal.organizationId}`
        const rows = yield* sql<ConversationRow>`
        SELECT ${columns} FROM runs
        WHERE workflow_id = ${agentId} AND organization_id = ${principal.organizationId}
        ORDER BY created_at DESC, id DESC
        LIMIT ${pageSize} OFFSET ${(page - 1) * pageSize}`
        return { items: rows.map(toView), total: counted?.total ?? 0 }
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const get = Effect.fn("Conversations.get")(function*(principal: Principal, conversationId: number) {
      const [row] = yield* sql<ConversationRow>`
        SELECT ${columns} FROM runs WHERE id = ${conversationId} AND organization_id = ${principal.organizationId}`
      if (!row) return yield* Effect.fail(new NotFound({ resource: "Conversation", id: conversationId }))
      return toView(row)
    }, Effect.catchTag("SqlError", Effect.die))

    return Conversations.of({ listForAgent, get })
  })
)
