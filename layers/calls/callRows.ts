import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { CallProgressFacts } from "../../src/calls/callRecord.ts"
import type { OrganizationId, RunId, WorkflowId } from "../../src/domain/ids.ts"
import { channelOfMode } from "../../src/usage/channels.ts"
import { ORG_CLAIM_LOCK } from "../campaigns/scheduler/contactClaims.ts"

/** A call as stored, joined to its attempt and run: what the API shows and the scheduler places. */
export interface CallRow extends CallProgressFacts {
  readonly id: number
  readonly organization_id: OrganizationId
  readonly workflow_id: WorkflowId
  readonly use_draft: boolean
  readonly phone_number: string
  readonly initial_context: Record<string, unknown>
  readonly telephony_configuration_id: number | null
  readonly from_phone_number_id: number | null
  readonly scheduled_at: Date | null
  readonly run_id: RunId | null
  readonly run_name: string | null
  readonly caller_number: string | null
  readonly duration_seconds: number | null
  readonly end_reason: string | null
  readonly error: string | null
  readonly idempotency_key: string | null
  readonly request_fingerprint: string
  readonly source: string
  readonly created_at: Date
}

/** What a call is dialled with, decided just before it is: the line and the agent's version. */
export interface CallLine {
  readonly provider: string
  readonly telephonyConfigurationId: number
  readonly callerNumber: string
  readonly definitionId: number
  readonly versionNumber: number
}

/** A call given its attempt and run: what placing it needs. */
export interface OpenedCall {
  readonly callId: number
  readonly attemptId: number
  readonly runId: RunId
}

/** A call's request as stored. */
export interface NewCall {
  readonly organizationId: OrganizationId
  readonly workflowId: WorkflowId
  readonly useDraft: boolean
  readonly phoneNumber: string
  readonly variables: Readonly<Record<string, unknown>>
  readonly telephonyConfigurationId: number | null
  readonly fromPhoneNumberId: number | null
  readonly scheduledAt: number | null
  readonly idempotencyKey: string | null
  readonly fingerprint: string
  readonly source: string
}

const at = (now: number) => new Date(now)

export const makeCallRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const selectCalls = sql`
    SELECT c.id, c.organization_id, c.workflow_id, c.use_draft, c.phone_number, c.initial_context,
           COALESCE(a.telephony_configuration_id, c.telephony_configuration_id) AS telephony_configuration_id,
           c.from_phone_number_id, c.scheduled_at, c.state, c.run_id, r.name AS run_name,
           a.caller_number, a.answered_at IS NOT NULL AS answered, a.outcome,
           r.duration_seconds, COALESCE(a.end_reason, CASE WHEN c.state = 'not_placed' THEN 'not_placed' END) AS end_reason,
           COALESCE(c.error, r.error) AS error, c.idempotency_key, c.request_fingerprint, c.source, c.created_at
    FROM calls c
    LEFT JOIN campaign_attempts a ON a.id = c.attempt_id
    LEFT JOIN runs r ON r.id = c.run_id`

  const byId = (organizationId: OrganizationId, id: number) =>
    Effect.map(
      sql<CallRow>`${selectCalls} WHERE c.id = ${id} AND c.organization_id = ${organizationId}`,
      (rows) => rows[0]
    )

  const byKey = (organizationId: OrganizationId, key: string) =>
    Effect.map(
      sql<CallRow>`${selectCalls} WHERE c.organization_id = ${organizationId} AND c.idempotency_key = ${key}`,
      (rows) => rows[0]
    )

  /**
   * Takes the organization's claim lock, the one every campaign claim takes (contactClaims.ts), so
   * the live calls counted after it are exact for campaigns and single calls alike until commit.
   */
  const lockOrganization = (organizationId: OrganizationId) =>
    sql`SELECT pg_advisory_xact_lock(${ORG_CLAIM_LOCK}, ${organizationId}::int)`

  const onDoNotCall = (organizationId: OrganizationId, phoneNumber: string) =>
    Effect.map(
      sql`SELECT 1 FROM do_not_call_numbers WHERE organization_id = ${organizationId} AND phone_number = ${phoneNumber}`,
      (rows) => rows.length > 0
    )

  /** Which of the organization's frequency caps a call to the number now would break, if any. */
  const frequencyCapReached = (organizationId: OrganizationId, phoneNumber: string, now: number) =>
    Effect.map(
      sql<{ per_day: number | null; per_7_days: number | null; day_calls: number; week_calls: number }>`
        SELECT (p.frequency_caps ->> 'per_day')::int AS per_day, (p.frequency_caps ->> 'per_7_days')::int AS per_7_days,
               count(*) FILTER (WHERE r.created_at > ${
        at(now - 86_400_000)
      })::int AS day_calls, count(r.id)::int AS week_calls
        FROM organization_compliance_policies p
        LEFT JOIN runs r ON r.organization_id = p.organization_id AND r.called_number = ${phoneNumber}
          AND r.direction = 'outbound' AND r.created_at > ${at(now - 7 * 86_400_000)}
        WHERE p.organization_id = ${organizationId}
        GROUP BY p.frequency_caps`,
      ([caps]) => {
        if (caps === undefined) return undefined
        if (caps.per_day !== null && caps.day_calls >= caps.per_day) return `${caps.per_day} in 24 hours`
        if (caps.per_7_days !== null && caps.week_calls >= caps.per_7_days) return `${caps.per_7_days} in 7 days`
        return undefined
      }
    )

  const liveCalls = (organizationId: OrganizationId) =>
    Effect.map(
      sql<{ live: number }>`
        SELECT count(*)::int AS live FROM campaign_attempts WHERE organization_id = ${organizationId} AND ended_at IS NULL`,
      (rows) => rows[0]?.live ?? 0
    )

  const insert = (call: NewCall, state: "scheduled" | "placing", now: number) =>
    Effect.map(
      sql<{ id: number }>`
        INSERT INTO calls (organization_id, workflow_id, use_draft, phone_number, initial_context, telephony_configuration_id,
                           from_phone_number_id, scheduled_at, state, idempotency_key, request_fingerprint, source,
                           created_at, updated_at)
        VALUES (${call.organizationId}, ${call.workflowId}, ${call.useDraft}, ${call.phoneNumber},
                ${JSON.stringify(call.variables)}::jsonb, ${call.telephonyConfigurationId}, ${call.fromPhoneNumberId},
                ${call.scheduledAt === null ? null : at(call.scheduledAt)}, ${state}, ${call.idempotencyKey},
                ${call.fingerprint}, ${call.source}, ${at(now)}, ${at(now)})
        RETURNING id`,
      (rows) => rows[0]!.id
    )

  /**
   * The call's run and attempt, as the dialer's claim makes a campaign contact's: the run carries
   * the line and the numbers, the attempt (no campaign, no contact) is the live-call slot until the
   * carrier's final event (or reconciliation after `deadlineAt`) ends it.
   */
  const open = (callId: number, line: CallLine, now: number, deadlineAt: number) =>
    Effect.map(
      sql<{ run_id: RunId; attempt_id: number }>`
        WITH call AS (
          SELECT id, organization_id, workflow_id, phone_number, initial_context, use_draft, source FROM calls WHERE id = ${callId}
        ),
        new_run AS (
          INSERT INTO runs (organization_id, workflow_id, definition_id, version_number, name, channel, mode, direction,
                            caller_number, called_number, initial_context, created_at, updated_at)
          SELECT organization_id, workflow_id, ${line.definitionId}, ${line.versionNumber},
                 ${"call-"} || id || CASE WHEN use_draft THEN '-test' ELSE '' END,
                 ${channelOfMode(line.provider)}, ${line.provider}, 'outbound', ${line.callerNumber}, phone_number,
                 -- The caller's variables, then what the call itself is; later keys win, as in a spread.
                 initial_context || jsonb_build_object('phone_number', phone_number, 'caller_number', ${line.callerNumber}::text,
                                                       'called_number', phone_number, 'call_id', id, 'triggered_by', source,
                                                       'telephony_configuration_id', ${line.telephonyConfigurationId}::bigint),
                 ${at(now)}, ${at(now)}
          FROM call
          RETURNING id, organization_id
        ),
        new_attempt AS (
          INSERT INTO campaign_attempts (organization_id, campaign_id, contact_id, attempt_number, run_id, created_at,
                                         deadline_at, telephony_configuration_id, provider, caller_number)
          SELECT organization_id, NULL, NULL, 1, id, ${at(now)}, ${at(deadlineAt)}, ${line.telephonyConfigurationId},
                 ${line.provider}, ${line.callerNumber}
          FROM new_run
          RETURNING id, run_id
        )
        UPDATE calls SET state = 'placing', run_id = new_attempt.run_id, attempt_id = new_attempt.id,
                         telephony_configuration_id = ${line.telephonyConfigurationId}, updated_at = ${at(now)}
        FROM new_attempt
        WHERE calls.id = ${callId}
        RETURNING new_attempt.run_id, new_attempt.id AS attempt_id`,
      (rows): OpenedCall => ({ callId, runId: rows[0]!.run_id, attemptId: rows[0]!.attempt_id })
    )

  const markPlaced = (callId: number, now: number) =>
    sql`UPDATE calls SET state = 'placed', updated_at = ${at(now)} WHERE id = ${callId} AND state = 'placing'`

  /** The carrier refused, or the line or agent is gone by the time a scheduled call is due. */
  const markNotPlaced = (callId: number, error: string, now: number) =>
    sql`UPDATE calls SET state = 'not_placed', error = ${error}, updated_at = ${at(now)}
        WHERE id = ${callId} AND state IN ('scheduled', 'placing')`

  /** Scheduled calls now due, oldest first; a process takes each under the organization's lock. */
  const due = (now: number, limit: number) =>
    sql<{ id: number; organization_id: OrganizationId }>`
      SELECT id, organization_id FROM calls WHERE state = 'scheduled' AND scheduled_at <= ${at(now)}
      ORDER BY scheduled_at, id LIMIT ${limit}`

  /** A due scheduled call, locked for this transaction unless another process is taking it. */
  const takeScheduled = (callId: number) =>
    Effect.map(
      sql<CallRow>`${selectCalls} WHERE c.id = ${callId} AND c.state = 'scheduled' FOR UPDATE OF c SKIP LOCKED`,
      (rows) => rows[0]
    )

  /** The workflow a call runs, by id or public UUID, in the caller's organization only. */
  const workflow = (organizationId: OrganizationId, by: { readonly id: number } | { readonly uuid: string }) =>
    Effect.map(
      "id" in by
        ? sql<{ id: WorkflowId; status: string }>`
            SELECT id, status FROM workflows WHERE organization_id = ${organizationId} AND id = ${by.id}`
        : sql<{ id: WorkflowId; status: string }>`
            SELECT id, status FROM workflows WHERE organization_id = ${organizationId} AND workflow_uuid = ${by.uuid}::uuid`,
      (rows) => rows[0]
    )

  /**
   * The agent of the organization whose version a call would run (the published one, or with
   * `useDraft` the draft or the published one) has an enabled trigger node at `path`.
   */
  const workflowByTrigger = (organizationId: OrganizationId, path: string, useDraft: boolean) =>
    Effect.map(
      sql<{ id: WorkflowId; status: string }>`
        SELECT w.id, w.status FROM workflows w
        WHERE w.organization_id = ${organizationId} AND EXISTS (
          SELECT 1 FROM workflow_definitions d, jsonb_array_elements(d.workflow_definition -> 'nodes') n
          WHERE d.workflow_id = w.id AND d.version_status IN ${
        sql.in(useDraft ? ["draft", "published"] : ["published"])
      }
            AND n ->> 'type' = 'trigger' AND n -> 'data' ->> 'trigger_path' = ${path}
            AND COALESCE(n -> 'data' ->> 'enabled', 'true') <> 'false')
        ORDER BY w.id LIMIT 1`,
      (rows) => rows[0]
    )

  /** The version a call runs: the published one, or with `useDraft` the latest draft (else the published one). */
  const definition = (workflowId: number, useDraft: boolean) =>
    Effect.map(
      sql<{ id: number; version_number: number }>`
        SELECT id, version_number FROM workflow_definitions
        WHERE workflow_id = ${workflowId} AND version_status IN ${
        sql.in(useDraft ? ["draft", "published"] : ["published"])
      }
        ORDER BY (version_status = 'draft') DESC, version_number DESC LIMIT 1`,
      (rows) => rows[0]
    )

  /** An active phone number of the configuration, by id. */
  const callerNumber = (configurationId: number, phoneNumberId: number) =>
    Effect.map(
      sql<{ address: string }>`
        SELECT address FROM phone_numbers
        WHERE id = ${phoneNumberId} AND telephony_configuration_id = ${configurationId} AND is_active`,
      (rows) => rows[0]?.address
    )

  return {
    byId,
    byKey,
    lockOrganization,
    onDoNotCall,
    frequencyCapReached,
    liveCalls,
    insert,
    open,
    markPlaced,
    markNotPlaced,
    due,
    takeScheduled,
    workflow,
    workflowByTrigger,
    definition,
    callerNumber
  }
})

export type CallRows = Effect.Effect.Success<typeof makeCallRows>
