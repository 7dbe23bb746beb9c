import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import {
  ARTIFACT_LINK_PURPOSE,
  type ArtifactKind,
  artifactLinkMessage,
  artifactLinkUrl,
  artifactPath
} from "../../src/usage/artifactLinks.ts"
import type { ClaimedDelivery } from "./webhookRows.ts"

/** A receiver may fetch the artifacts some time after the event (a retry, a queue): a day, like the retries. */
const WEBHOOK_LINK_TTL_SECONDS = 24 * 60 * 60

interface RunRow {
  readonly id: number
  readonly workflow_id: number
  readonly name: string
  readonly campaign_id: number | null
  readonly contact_id: number | null
  readonly call_id: number | null
  readonly channel: string
  readonly mode: string
  readonly direction: string
  readonly state: string
  readonly caller_number: string | null
  readonly called_number: string | null
  readonly disposition: string | null
  readonly end_reason: string | null
  readonly error: string | null
  readonly initial_context: Record<string, unknown>
  readonly gathered_context: Record<string, unknown>
  readonly transcript: ReadonlyArray<unknown>
  readonly duration_seconds: number
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly service_tokens: number
  readonly tts_characters: number
  readonly stt_seconds: number
  readonly recording_key: string | null
  readonly transcript_key: string | null
  readonly started_at: Date | null
  readonly ended_at: Date | null
  readonly created_at: Date
}

/** A signed link to a run's artifact, valid as long as a delivery is retried. */
export const webhookArtifactLink =
  (publicUrl: string, sign: (purpose: string, message: string) => string) =>
  (runId: number, kind: ArtifactKind, nowSeconds: number) => {
    const path = artifactPath(runId, kind)
    const expires = nowSeconds + WEBHOOK_LINK_TTL_SECONDS
    return artifactLinkUrl(publicUrl, path, expires, sign(ARTIFACT_LINK_PURPOSE, artifactLinkMessage(path, expires)))
  }

/**
 * The body of an event's message, in the Standard Webhooks envelope (`type`, `timestamp`,
 * `data`), rendered from the rows as they are when it is first sent (a run's carrier duration may
 * arrive a moment after its transcript) and then fixed for every delivery and retry.
 */
export const makeWebhookPayloads = (publicUrl: string, sign: (purpose: string, message: string) => string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const link = webhookArtifactLink(publicUrl, sign)

    const runsData = (runIds: ReadonlyArray<number>, now: number) =>
      Effect.map(
        sql<RunRow>`
          SELECT r.id, r.workflow_id, r.name, r.campaign_id, r.contact_id, c.id AS call_id, r.channel, r.mode, r.direction,
                 r.state, r.caller_number, r.called_number, r.disposition, r.end_reason, r.error, r.initial_context,
                 r.gathered_context, r.transcript, r.duration_seconds, r.prompt_tokens, r.completion_tokens,
                 r.service_tokens, r.tts_characters, r.stt_seconds, r.recording_key, r.transcript_key,
                 r.started_at, r.ended_at, r.created_at
          FROM runs r LEFT JOIN calls c ON c.run_id = r.id
          WHERE r.id IN ${sql.in(runIds)}`,
        (runs) => {
          const seconds = Math.floor(now / 1000)
          return new Map(runs.map((run) => [Number(run.id), {
            run_id: Number(run.id),
            run_name: run.name,
            agent_id: Number(run.workflow_id),
            campaign_id: run.campaign_id === null ? null : Number(run.campaign_id),
            contact_id: run.contact_id === null ? null : Number(run.contact_id),
            call_id: run.call_id === null ? null : Number(run.call_id),
            channel: run.channel,
            mode: run.mode,
            direction: run.direction,
            status: run.state,
            caller_number: run.caller_number,
            called_number: run.called_number,
            disposition: run.disposition,
            end_reason: run.end_reason,
            error: run.error,
            duration_seconds: run.duration_seconds,
            initial_context: run.initial_context,
            extracted_variables: run.gathered_context,
            transcript: run.transcript,
            usage: {
              prompt_tokens: Number(run.prompt_tokens),
              completion_tokens: Number(run.completion_tokens),
              service_tokens: Number(run.service_tokens),
              tts_characters: Number(run.tts_characters),
              stt_seconds: run.stt_seconds
            },
            artifacts: {
              recording_url: run.recording_key === null ? null : link(Number(run.id), "recording", seconds),
              transcript_url: run.transcript_key === null ? null : link(Number(run.id), "transcript", seconds)
            },
            created_at: run.created_at.toISOString(),
            started_at: run.started_at?.toISOString() ?? null,
            ended_at: run.ended_at?.toISOString() ?? null
          }]))
        }
      )

    const campaignsData = (campaignIds: ReadonlyArray<number>) =>
      Effect.map(
        sql<{
          id: number
          name: string
          workflow_id: number
          state: string
          total_rows: number | null
          processed_rows: number
          failed_rows: number
          executed_count: number
          started_at: Date | null
          completed_at: Date | null
        }>`
          SELECT id, name, workflow_id, state, total_rows, processed_rows, failed_rows, executed_count, started_at, completed_at
          FROM campaigns WHERE id IN ${sql.in(campaignIds)}`,
        (campaigns) =>
          new Map(campaigns.map((campaign) => [Number(campaign.id), {
            campaign_id: Number(campaign.id),
            name: campaign.name,
            agent_id: Number(campaign.workflow_id),
            state: campaign.state,
            total_rows: campaign.total_rows,
            processed_rows: campaign.processed_rows,
            failed_rows: campaign.failed_rows,
            executed_count: campaign.executed_count,
            started_at: campaign.started_at?.toISOString() ?? null,
            completed_at: campaign.completed_at?.toISOString() ?? null
          }]))
      )

    /** Events whose body is their run's (the others are their campaign's). */
    const carriesRun = (delivery: ClaimedDelivery) =>
      delivery.event_type === "run.completed" || delivery.event_type === "call.voicemail" ||
      delivery.event_type === "call.transfer"

    /** A transfer's event says where the caller was sent and how it went, beside the run. */
    const transferOf = (run: object) => {
      const gathered = (run as { extracted_variables?: Record<string, unknown> }).extracted_variables ?? {}
      return {
        transfer: {
          destination: gathered["transfer_destination"] ?? null,
          outcome: gathered["transfer_outcome"] ?? null,
          // Runs transferred before warm transfers existed were all cold.
          type: gathered["transfer_type"] ?? (gathered["transfer_outcome"] === undefined ? null : "cold")
        }
      }
    }

    /** The bodies of the events of `deliveries` (each event once), read in one query per kind. */
    return (deliveries: ReadonlyArray<ClaimedDelivery>, now: number) =>
      Effect.gen(function*() {
        const runIds = [
          ...new Set(deliveries.filter(carriesRun).map((d) => Number(d.run_id)))
        ]
        const campaignIds = [
          ...new Set(deliveries.filter((d) => !carriesRun(d)).map((d) => Number(d.campaign_id)))
        ]
        const runs = runIds.length === 0 ? new Map<number, object>() : yield* runsData(runIds, now)
        const campaigns = campaignIds.length === 0 ? new Map<number, object>() : yield* campaignsData(campaignIds)
        const bodies = new Map<number, Record<string, unknown>>()
        for (const delivery of deliveries) {
          const run = carriesRun(delivery) ? runs.get(Number(delivery.run_id)) : undefined
          const data = carriesRun(delivery)
            ? run === undefined
              ? { run_id: Number(delivery.run_id), deleted: true }
              : delivery.event_type === "call.transfer"
              ? { ...run, ...transferOf(run) }
              : run
            : campaigns.get(Number(delivery.campaign_id)) ??
              { campaign_id: Number(delivery.campaign_id), deleted: true }
          bodies.set(Number(delivery.event_id), {
            type: delivery.event_type,
            timestamp: delivery.occurred_at.toISOString(),
            data
          })
        }
        return bodies
      })
  })
