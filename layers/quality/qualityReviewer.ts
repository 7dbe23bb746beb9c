import type { SqlClient } from "@effect/sql"
import { Cause, Effect, Option } from "effect"
import * as crypto from "node:crypto"
import type { LlmChatShape } from "../../services/LlmChat.ts"
import type { LlmConnection, LlmGeneratorShape } from "../../services/LlmGenerator.ts"
import type { ModelSettingsShape } from "../../services/ModelSettings.ts"
import { overridesOf } from "../../src/conversation/agentOverrides.ts"
import { noUsage, type TokenUsage } from "../../src/conversation/transcript.ts"
import {
  parseCustomReview,
  parseDefaultReview,
  type ParsedReview,
  qualityReviewOf,
  reviewDecision
} from "../../src/quality/qualityReview.ts"
import { defaultReviewSchema, type ReviewedRun, reviewMessages } from "../../src/quality/reviewPrompt.ts"

/** A review whose reviewer has been silent this long is taken over (its process died mid-review). */
const LAPSE_SECONDS = 300

interface ClaimedRun {
  readonly run_id: string
  readonly organization_id: string
  readonly channel: string
  readonly duration_seconds: number
  readonly end_reason: string | null
  readonly transcript: unknown
  readonly workflow_configurations: unknown
  readonly voicemail: boolean
}

const asObject = (value: unknown): Record<string, unknown> | null => {
  const parsed = typeof value === "string" ? JSON.parse(value) : value
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : null
}

const transcriptOf = (value: unknown): ReviewedRun["transcript"] => {
  const parsed = typeof value === "string" ? JSON.parse(value) : value
  return Array.isArray(parsed)
    ? parsed.filter((turn) => typeof turn?.text === "string" && typeof turn?.role === "string")
    : []
}

interface Outcome {
  readonly parsed: ParsedReview
  readonly rubric: "default" | "custom" | null
  readonly model: string | null
  readonly usage: TokenUsage
}

/**
 * The background reviewer: claims waiting reviews (`FOR UPDATE SKIP LOCKED`, so several processes
 * on one PostgreSQL share them), decides from the agent's setting whether the run is reviewed
 * (duration, voicemail, the deterministic sample), asks the LLM and stores the parsed answer, or
 * the reason it could not be used, with the tokens added to the run's usage. A review whose
 * process died is claimed again once it lapses (at once on the embedded database, which one
 * process owns).
 */
export const makeQualityReviewer = (deps: {
  readonly sql: SqlClient.SqlClient
  readonly modelSettings: ModelSettingsShape
  readonly generator: LlmGeneratorShape
  readonly chat: LlmChatShape
  readonly onPostgres: boolean
}) => {
  const { chat, generator, modelSettings, sql } = deps
  const owner = crypto.randomUUID()

  const claim = sql<ClaimedRun>`
    WITH claimed AS (
      UPDATE quality_reviews SET status = 'reviewing', reviewer = ${owner}, claimed_at = now()
      WHERE run_id = (
        SELECT run_id FROM quality_reviews
        WHERE status = 'pending'
           OR (status = 'reviewing'
               AND (claimed_at < now() - make_interval(secs => ${LAPSE_SECONDS})
                    ${deps.onPostgres ? sql`` : sql`OR reviewer IS DISTINCT FROM ${owner}`}))
        ORDER BY run_id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING run_id
    )
    SELECT r.id AS run_id, r.organization_id, r.channel, r.duration_seconds, r.end_reason, r.transcript,
           d.workflow_configurations,
           EXISTS (SELECT 1 FROM campaign_attempts a WHERE a.run_id = r.id AND a.outcome = 'voicemail') AS voicemail
    FROM claimed c
    JOIN runs r ON r.id = c.run_id
    LEFT JOIN workflow_definitions d ON d.id = COALESCE(r.definition_id, (
      SELECT p.id FROM workflow_definitions p WHERE p.workflow_id = r.workflow_id AND p.version_status = 'published'))`
    .pipe(Effect.map((rows) => rows[0]))

  const mine = (runId: string) => sql`run_id = ${runId} AND reviewer = ${owner} AND status = 'reviewing'`

  const skip = (runId: string, reason: string) =>
    sql`
      UPDATE quality_reviews SET status = 'skipped', skip_reason = ${reason}, reviewer = NULL, reviewed_at = now()
      WHERE ${mine(runId)}`

  /** The review, and the run's usage grown by its tokens, in one transaction. */
  const store = (runId: string, outcome: Outcome) =>
    sql.withTransaction(Effect.gen(function*() {
      const { parsed, usage } = outcome
      const result = parsed.ok ? parsed.result : null
      const held = yield* sql`
        UPDATE quality_reviews
        SET status = ${parsed.ok ? "reviewed" : "failed"}, failure = ${parsed.ok ? null : parsed.reason},
            rubric = ${outcome.rubric}, model = ${outcome.model},
            score = ${outcome.rubric === "default" && result ? result["score"] as number : null},
            tags = ${JSON.stringify(outcome.rubric === "default" && result ? result["tags"] : [])}::jsonb,
            sentiment = ${outcome.rubric === "default" && result ? result["sentiment"] as string : null},
            summary = ${outcome.rubric === "default" && result ? result["summary"] as string : null},
            result = ${result === null ? null : JSON.stringify(result)}::jsonb,
            prompt_tokens = ${usage.prompt_tokens}, completion_tokens = ${usage.completion_tokens},
            reviewer = NULL, reviewed_at = now()
        WHERE ${mine(runId)}
        RETURNING run_id`
      const total = usage.prompt_tokens + usage.completion_tokens
      if (held.length === 0 || total === 0) return
      yield* sql`
        UPDATE runs
        SET prompt_tokens = prompt_tokens + ${usage.prompt_tokens},
            completion_tokens = completion_tokens + ${usage.completion_tokens},
            service_tokens = service_tokens + ${total}
        WHERE id = ${runId}`
    }))

  const ask = (connection: LlmConnection, rubric: "default" | { readonly prompt: string }, run: ReviewedRun) => {
    const messages = reviewMessages(rubric, run)
    return rubric === "default"
      ? generator.generateStructured({
        connection,
        messages,
        schemaName: "quality_review",
        jsonSchema: defaultReviewSchema
      }).pipe(Effect.map((reply) => ({ parsed: parseDefaultReview(reply.text), usage: reply.usage })))
      : chat.reply({ connection, messages, tools: [] }, () => Effect.void).pipe(
        Effect.map((reply) => ({ parsed: parseCustomReview(reply.text), usage: reply.usage }))
      )
  }

  const review = (run: ClaimedRun) =>
    Effect.gen(function*() {
      const configurations = asObject(run.workflow_configurations)
      const setting = qualityReviewOf(configurations)
      const decision = reviewDecision(setting, {
        id: run.run_id,
        durationSeconds: run.duration_seconds,
        voicemail: run.voicemail
      })
      if (!decision.review || setting === null) {
        return yield* skip(run.run_id, decision.review ? "disabled" : decision.reason)
      }
      const rubric = setting.rubric === "default" ? "default" as const : "custom" as const
      const organization = yield* modelSettings.llmFor(Number(run.organization_id))
      if (Option.isNone(organization)) {
        return yield* store(run.run_id, {
          parsed: { ok: false, reason: "No LLM is configured for the organization" },
          rubric,
          model: null,
          usage: noUsage
        })
      }
      const model = setting.model ?? overridesOf(configurations)?.llm_model ?? organization.value.model
      const connection = { ...organization.value, model }
      const answered = yield* ask(connection, setting.rubric, {
        channel: run.channel,
        durationSeconds: run.duration_seconds,
        endReason: run.end_reason,
        transcript: transcriptOf(run.transcript)
      }).pipe(
        Effect.catchTag("LlmFailed", (failure) =>
          Effect.succeed({
            parsed: { ok: false as const, reason: `The LLM did not answer (${failure.reason})` },
            usage: noUsage
          }))
      )
      yield* store(run.run_id, { ...answered, rubric, model })
    }).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.interrupt
          : Effect.logError("Quality review failed", cause).pipe(
            Effect.zipRight(store(run.run_id, {
              parsed: { ok: false, reason: "The review failed on the server (the reason is in its log)" },
              rubric: null,
              model: null,
              usage: noUsage
            })),
            Effect.catchAllCause(() => Effect.void)
          )
      ),
      Effect.withSpan("QualityReviewer.review", { attributes: { runId: run.run_id } })
    )

  /** Reviews runs until none is waiting. */
  const drain: Effect.Effect<void> = Effect.gen(function*() {
    while (true) {
      const run = yield* claim.pipe(Effect.orDie)
      if (!run) return
      yield* review(run)
    }
  })

  return { drain }
}
