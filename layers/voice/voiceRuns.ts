import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { StoredConversation } from "../../services/ConversationStarts.ts"
import { serviceTokens, type TokenUsage, type TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { OrganizationId, RunId, WorkflowId } from "../../src/domain/ids.ts"
import { channelOfMode } from "../../src/usage/channels.ts"

/** A run a media stream may attach to, with the agent version it runs. */
export interface MediaRun {
  readonly id: RunId
  readonly organization_id: OrganizationId
  readonly workflow_id: WorkflowId
  readonly definition_id: number | null
  readonly channel: "telephony" | "web" | "chat"
  readonly mode: string
  readonly direction: "inbound" | "outbound"
  readonly state: "initialized" | "running" | "completed" | "failed"
  readonly ended_at: Date | null
  readonly initial_context: Record<string, unknown>
  readonly conversation: StoredConversation | null
  /** The carrier's call id and configuration: from the campaign attempt, or the inbound run itself. */
  readonly provider_call_id: string | null
  /** The live call's own id where the carrier has one apart (Plivo's CallUUID); an inbound run's call is live by its id. */
  readonly live_call_id: string | null
  readonly telephony_configuration_id: number | null
  readonly held: boolean
  readonly workflow_definition: unknown
  readonly template_context_variables: Record<string, unknown> | null
  readonly workflow_configurations: Record<string, unknown> | null
  /** A campaign call's campaign's own voicemail policy, which replaces the agent's; null: the agent's. */
  readonly campaign_voicemail: Record<string, unknown> | null
  readonly disposition_codes: ReadonlyArray<unknown>
  /** The other party's number: an outbound call's callee, an inbound call's caller; none for a browser call. */
  readonly party_number: string | null
  /** The account's number the call is on: an outbound call's caller ID, the number an inbound call reached. */
  readonly line_number: string | null
}

/** How long a call's hold on its run lasts without renewal: a crashed process frees it this fast. */
export const CALL_LEASE_SECONDS = 30

interface FinishedCall {
  readonly runId: number
  readonly token: string
  readonly state: "completed" | "failed"
  readonly endReason: string
  readonly error: string | null
  readonly conversation: StoredConversation
  readonly transcript: ReadonlyArray<TranscriptTurn>
  readonly gatheredContext: Readonly<Record<string, unknown>>
  readonly disposition: string
  readonly usage: TokenUsage
  readonly ttsCharacters: number
  readonly sttSeconds: number
  readonly durationSeconds: number
  readonly latencyP50: number | null
  readonly latencyP90: number | null
  readonly recordingKey: string | null
  readonly transcriptKey: string | null
}

/** An inbound run awaiting its media connection: a browser test call, or a call a carrier put through. */
interface NewMediaRun {
  readonly organizationId: number
  readonly workflowId: number
  readonly definitionId: number
  readonly versionNumber: number
  readonly name: string
  /** The run's `channel` follows from it. */
  readonly mode: string
  readonly initialContext: Readonly<Record<string, unknown>>
  /** Fixed now when the caller knows it; else at the first media connection. */
  readonly conversation?: StoredConversation | undefined
  readonly carrierCall?: {
    readonly callerNumber: string
    readonly calledNumber: string
    readonly providerCallId: string
    readonly telephonyConfigurationId: number
  } | undefined
}

/** The runs table as voice calls use it. Database failures are defects: the caller cannot fix them. */
export const makeVoiceRuns = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = (run: NewMediaRun) =>
    sql<{ id: number }>`
      INSERT INTO runs (organization_id, workflow_id, definition_id, version_number, name, channel, mode, direction, state,
                        caller_number, called_number, provider_call_id, telephony_configuration_id, initial_context,
                        conversation)
      VALUES (${run.organizationId}, ${run.workflowId}, ${run.definitionId}, ${run.versionNumber}, ${run.name},
              ${channelOfMode(run.mode)}, ${run.mode}, 'inbound', 'initialized', ${
      run.carrierCall?.callerNumber ?? null
    },
              ${run.carrierCall?.calledNumber ?? null}, ${run.carrierCall?.providerCallId ?? null},
              ${run.carrierCall?.telephonyConfigurationId ?? null}, ${JSON.stringify(run.initialContext)}::jsonb,
              ${run.conversation === undefined ? null : JSON.stringify(run.conversation)}::jsonb)
      RETURNING id`.pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie)

  const mediaRun = (runId: number) =>
    sql<MediaRun>`
      SELECT r.id, r.organization_id, r.workflow_id, r.definition_id, r.channel, r.mode, r.direction, r.state, r.ended_at,
             r.initial_context, r.conversation,
             COALESCE(a.provider_call_id, r.provider_call_id) AS provider_call_id,
             CASE WHEN a.id IS NULL THEN r.provider_call_id ELSE a.live_call_id END AS live_call_id,
             COALESCE(a.telephony_configuration_id, r.telephony_configuration_id) AS telephony_configuration_id,
             (r.busy_until IS NOT NULL AND r.busy_until > now()) AS held,
             d.workflow_definition, d.template_context_variables, d.workflow_configurations,
             c.voicemail AS campaign_voicemail,
             COALESCE(w.call_disposition_codes->'disposition_codes', '[]'::jsonb) AS disposition_codes,
             CASE WHEN r.direction = 'outbound' THEN r.called_number ELSE r.caller_number END AS party_number,
             CASE WHEN r.direction = 'outbound' THEN COALESCE(a.caller_number, r.caller_number) ELSE r.called_number END
               AS line_number
      FROM runs r
      JOIN workflows w ON w.id = r.workflow_id
      LEFT JOIN workflow_definitions d ON d.id = r.definition_id
      LEFT JOIN campaign_attempts a ON a.run_id = r.id
      LEFT JOIN campaigns c ON c.id = COALESCE(a.campaign_id, r.campaign_id)
      WHERE r.id = ${runId}`.pipe(Effect.map((rows) => rows[0] ?? null), Effect.orDie)

  /**
   * Takes the run for this call: only a run not yet ended and not held by another live call (a
   * replayed or second media connection is refused). Marks it running.
   */
  const hold = (runId: number, token: string, conversation: StoredConversation) =>
    sql<{ started_at: Date }>`
      UPDATE runs SET state = 'running', started_at = COALESCE(started_at, now()), conversation = ${
      JSON.stringify(conversation)
    }::jsonb,
             busy_until = now() + ${`${CALL_LEASE_SECONDS} seconds`}::interval, busy_token = ${token},
             last_activity_at = now(), updated_at = now()
      WHERE id = ${runId} AND ended_at IS NULL AND state IN ('initialized', 'running')
        AND (busy_until IS NULL OR busy_until < now())
      RETURNING started_at`.pipe(Effect.map((rows) => rows[0] ?? null), Effect.orDie)

  const renew = (runId: number, token: string) =>
    sql`UPDATE runs SET busy_until = now() + ${`${CALL_LEASE_SECONDS} seconds`}::interval WHERE id = ${runId} AND busy_token = ${token}`
      .pipe(
        Effect.asVoid,
        Effect.orDie
      )

  /** The conversation so far, after each turn, so a live call can be read while it runs. */
  const saveProgress = (
    runId: number,
    token: string,
    conversation: StoredConversation,
    transcript: ReadonlyArray<TranscriptTurn>
  ) =>
    sql`
      UPDATE runs SET conversation = ${JSON.stringify(conversation)}::jsonb, transcript = ${
      JSON.stringify(transcript)
    }::jsonb,
             last_activity_at = now(), updated_at = now()
      WHERE id = ${runId} AND busy_token = ${token}`.pipe(Effect.asVoid, Effect.orDie)

  /**
   * Ends the run with what the call produced. A carrier's final status may have ended it already
   * (it only knows "completed"): the conversation's own reason and results replace that.
   */
  const finish = (call: FinishedCall) =>
    sql`
      UPDATE runs SET
        state = ${call.state},
        end_reason = CASE WHEN end_reason IS NULL OR end_reason LIKE 'telephony_%' THEN ${call.endReason} ELSE end_reason END,
        error = ${call.error},
        conversation = ${JSON.stringify(call.conversation)}::jsonb,
        transcript = ${JSON.stringify(call.transcript)}::jsonb,
        gathered_context = ${JSON.stringify(call.gatheredContext)}::jsonb,
        disposition = ${call.disposition},
        prompt_tokens = ${call.usage.prompt_tokens},
        completion_tokens = ${call.usage.completion_tokens},
        service_tokens = ${serviceTokens(call.usage)},
        tts_characters = ${call.ttsCharacters},
        stt_seconds = ${call.sttSeconds},
        duration_seconds = GREATEST(duration_seconds, ${call.durationSeconds}),
        latency_p50_ms = ${call.latencyP50},
        latency_p90_ms = ${call.latencyP90},
        recording_key = ${call.recordingKey},
        transcript_key = ${call.transcriptKey},
        ended_at = COALESCE(ended_at, now()),
        updated_at = now(),
        busy_until = NULL,
        busy_token = NULL
      WHERE id = ${call.runId} AND busy_token = ${call.token}`.pipe(Effect.asVoid, Effect.orDie)

  /**
   * The callee's answering machine picked up (in-call detection): a campaign's attempt records it
   * before the call is hung up, so the carrier's final "completed" counts as voicemail (and the
   * campaign's voicemail retry rule applies), as with the carrier's own detection.
   */
  const machineAnswered = (runId: number) =>
    sql`UPDATE campaign_attempts SET answered_by = 'machine' WHERE run_id = ${runId}`.pipe(Effect.asVoid, Effect.orDie)

  return { insert, mediaRun, hold, renew, saveProgress, finish, machineAnswered }
})

export type VoiceRuns = Effect.Effect.Success<typeof makeVoiceRuns>
