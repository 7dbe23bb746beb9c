import { SqlClient, type Statement } from "@effect/sql"
import { Config, Effect, Either, Layer, ParseResult } from "effect"
import { CampaignDoorbell } from "../../services/CampaignDoorbell.ts"
import {
  Campaigns,
  type CampaignSettingsInput,
  type CreateCampaignInput,
  type Paging,
  type RedialInput,
  type UpdateCampaignInput
} from "../../services/Campaigns.ts"
import { ContactImports } from "../../services/ContactImports.ts"
import { RecordingCatalog } from "../../services/Recordings.ts"
import { Storage } from "../../services/Storage.ts"
import { TelephonyConfigs } from "../../services/TelephonyConfigs.ts"
import { logEntry } from "../../src/campaign/campaignLog.ts"
import {
  circuitBreakerDefaults,
  mergeCircuitBreaker,
  mergeRateLimit,
  mergeRetry,
  mergeSchedule,
  rateLimitDefault,
  retryDefaults,
  type ScheduleConfig,
  validateSchedule
} from "../../src/campaign/campaignSettings.ts"
import {
  type CampaignCommand,
  canApply,
  editableStates,
  isFinal,
  refusal,
  transitions
} from "../../src/campaign/campaignState.ts"
import {
  cancelledWhileLoading,
  importProgress,
  startAfterFailedImport,
  startWhileLoading
} from "../../src/campaign/contactImport.ts"
import { Conflict, NotFound, PayloadTooLarge, ValidationFailed } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { requiredVariables } from "../../src/graph/templateVariables.ts"
import { asRegion } from "../../src/phone/mod.ts"
import { belongsTo } from "../../src/storage/uploadKeys.ts"
import { campaignReport } from "./campaignReport.ts"
import { type CampaignRow, selectCampaigns, toView } from "./campaignRows.ts"
import { makeVoicePreflight } from "./voicePreflight.ts"

interface WorkflowRow {
  readonly id: number
  readonly name: string
  readonly status: string
  readonly workflow_definition: unknown
}

const redialOutcomes = {
  retry_on_busy: "busy",
  retry_on_no_answer: "no-answer",
  retry_on_voicemail: "voicemail",
  retry_on_failed: "failed"
} as const

/**
 * Files up to this size are loaded before the create request answers (about 25,000 contacts, well
 * under a second); larger ones in the background (CAMPAIGN_IMPORT_INLINE_BYTES).
 */
const DEFAULT_INLINE_IMPORT_BYTES = 1024 * 1024

const pageCount = (total: number, limit: number) => Math.max(1, Math.ceil(total / limit))

export const CampaignsLive = Layer.effect(
  Campaigns,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const storage = yield* Storage
    const telephony = yield* TelephonyConfigs
    const recordings = yield* RecordingCatalog
    const preflight = yield* makeVoicePreflight
    const imports = yield* ContactImports
    const doorbell = yield* CampaignDoorbell
    const inlineImportBytes = yield* Config.integer("CAMPAIGN_IMPORT_INLINE_BYTES").pipe(
      Config.validate({ message: "must be 0 or more", validation: (bytes) => bytes >= 0 }),
      Config.withDefault(DEFAULT_INLINE_IMPORT_BYTES)
    )

    const findRow = (organizationId: number, id: number) =>
      Effect.flatMap(
        sql<CampaignRow>`${selectCampaigns(sql)} WHERE c.id = ${id} AND c.organization_id = ${organizationId}`,
        (rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Campaign", id })))
      )

    const findWorkflow = (organizationId: number, id: number) =>
      Effect.flatMap(
        sql<WorkflowRow>`
          SELECT w.id, w.name, w.status, d.workflow_definition
          FROM workflows w
          LEFT JOIN LATERAL (
            SELECT workflow_definition FROM workflow_definitions
            WHERE workflow_id = w.id AND version_status IN ('published', 'draft')
            ORDER BY (version_status = 'published') DESC, version_number DESC LIMIT 1
          ) d ON true
          WHERE w.id = ${id} AND w.organization_id = ${organizationId}`,
        (rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Workflow", id })))
      )

    const telephonyExists = (organizationId: number, id: number | null | undefined) =>
      id === null || id === undefined
        ? Effect.void
        : Effect.flatMap(
          sql`SELECT 1 FROM telephony_configurations WHERE id = ${id} AND organization_id = ${organizationId}`,
          (
            rows
          ) => (rows.length > 0 ? Effect.void : Effect.fail(new NotFound({ resource: "Telephony configuration", id })))
        )

    const scheduleOrFail = (schedule: ScheduleConfig | null) => {
      if (schedule === null) return Effect.succeed(null)
      const checked = validateSchedule(schedule)
      if (Either.isRight(checked)) return Effect.succeed(checked.right)
      const problems = ParseResult.ArrayFormatter.formatErrorSync(checked.left).map((issue) => ({
        loc: [
          "body",
          "schedule_config",
          ...issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)))
        ],
        msg: issue.message,
        type: "value_error"
      }))
      return Effect.fail(new ValidationFailed({ message: "Invalid schedule_config", problems }))
    }

    /** The settings a request leaves a campaign with, every rule checked on the merged result. */
    const mergedSettings = (current: CampaignRow | undefined, input: CampaignSettingsInput) =>
      Effect.gen(function*() {
        return {
          retry_config: mergeRetry(current?.retry_config ?? retryDefaults, input.retry_config),
          circuit_breaker: mergeCircuitBreaker(
            current?.circuit_breaker ?? circuitBreakerDefaults,
            input.circuit_breaker
          ),
          schedule_config: yield* scheduleOrFail(
            mergeSchedule(current?.schedule_config ?? null, input.schedule_config)
          ),
          max_concurrency: input.max_concurrency === undefined
            ? current?.max_concurrency ?? null
            : input.max_concurrency,
          rate_limit_per_second: mergeRateLimit(
            current?.rate_limit_per_second ?? rateLimitDefault,
            input.rate_limit_per_second
          )
        }
      })

    const regionFor = (organizationId: number, input: CreateCampaignInput) =>
      Effect.gen(function*() {
        if (input.default_region !== undefined && input.default_region !== null) {
          const region = asRegion(input.default_region)
          if (!region) {
            return yield* ValidationFailed.single(
              ["body", "default_region"],
              `"${input.default_region}" is not an ISO 3166 region code such as US or GB`
            )
          }
          return region
        }
        const [row] = yield* sql<{ default_region: string | null }>`
          SELECT default_region FROM telephony_configurations
          WHERE organization_id = ${organizationId}
            AND ${
          input.telephony_configuration_id == null
            ? sql`is_default_outbound`
            : sql`id = ${input.telephony_configuration_id}`
        }`
        return row?.default_region ? asRegion(row.default_region) : undefined
      })

    const sourceProblem = (msg: string) => ValidationFailed.single(["body", "source_id"], msg)

    const create = Effect.fn("Campaigns.create")(function*(principal: Principal, input: CreateCampaignInput) {
      const organizationId = principal.organizationId
      if (!belongsTo(input.source_id, organizationId)) {
        return yield* sourceProblem(
          "source_id is not an upload of this organization; use the s3_key from /api/v1/s3/presigned-upload-url"
        )
      }
      const workflow = yield* findWorkflow(organizationId, input.workflow_id)
      if (workflow.status !== "active") {
        return yield* ValidationFailed.single(
          ["body", "workflow_id"],
          `Workflow ${workflow.id} is archived; unarchive it to use it in a campaign`
        )
      }
      yield* telephonyExists(organizationId, input.telephony_configuration_id)
      const settings = yield* mergedSettings(undefined, input)
      const region = yield* regionFor(organizationId, input)
      const size = yield* storage.size(input.source_id).pipe(
        Effect.catchTag("NotFound", () => Effect.fail(sourceProblem("No file has been uploaded to source_id yet")))
      )
      if (size > storage.limits.maxBytes) {
        return yield* new PayloadTooLarge({
          message: `The contacts CSV is larger than ${storage.limits.maxBytes} bytes`
        })
      }
      const required = requiredVariables(workflow.workflow_definition ?? {})
      const recordingIds = yield* recordings.allIds(organizationId)
      const [row] = yield* sql<{ id: number }>`
        INSERT INTO campaigns (organization_id, workflow_id, telephony_configuration_id, name, source_type, source_id,
                               default_region, retry_config, max_concurrency, rate_limit_per_second, schedule_config,
                               circuit_breaker, logs, import_status, import_owner, import_heartbeat_at, import_bytes_total)
        VALUES (${organizationId}, ${workflow.id}, ${input.telephony_configuration_id ?? null}, ${input.name}, 'csv',
                ${input.source_id}, ${region ?? null}, ${JSON.stringify(settings.retry_config)}::jsonb,
                ${settings.max_concurrency}, ${settings.rate_limit_per_second},
                ${settings.schedule_config === null ? null : JSON.stringify(settings.schedule_config)}::jsonb,
                ${
        JSON.stringify(settings.circuit_breaker)
      }::jsonb, '[]'::jsonb, 'loading', ${imports.owner}, now(), ${size})
        RETURNING id`
      const id = row!.id
      const running = yield* imports.start({
        campaignId: id,
        sourceId: input.source_id,
        options: { defaultRegion: region, requiredColumns: required, recordingIds }
      })
      // A small file is loaded before the answer; a large one only has its header row checked.
      const ended = size <= inlineImportBytes || !(yield* running.headerAccepted) ? yield* running.outcome : undefined
      if (ended?._tag === "Refused") {
        // Refused before the answer: as if it had never been created (the import cleared its contacts).
        yield* sql`DELETE FROM campaigns WHERE id = ${id}`
        return yield* new ValidationFailed({
          message: "The contacts CSV cannot be used",
          problems: ended.problems.map((msg) => ({ loc: ["body", "source_id"], msg, type: "csv_invalid" }))
        })
      }
      return toView(yield* findRow(organizationId, id).pipe(Effect.orDie))
    }, Effect.catchTag("SqlError", Effect.die))

    const list = Effect.fn("Campaigns.list")(function*(principal: Principal, paging: Paging) {
      const [count] = yield* sql<{ total: number }>`
        SELECT count(*)::int AS total FROM campaigns WHERE organization_id = ${principal.organizationId}`
      const rows = yield* sql<CampaignRow>`
        ${selectCampaigns(sql)} WHERE c.organization_id = ${principal.organizationId}
        ORDER BY c.id DESC LIMIT ${paging.limit} OFFSET ${(paging.page - 1) * paging.limit}`
      const total = count?.total ?? 0
      return {
        campaigns: rows.map(toView),
        total_count: total,
        page: paging.page,
        limit: paging.limit,
        total_pages: pageCount(total, paging.limit)
      }
    }, Effect.orDie)

    const get = Effect.fn("Campaigns.get")(function*(principal: Principal, id: number) {
      return toView(yield* findRow(principal.organizationId, id))
    }, Effect.catchTag("SqlError", Effect.die))

    const update = Effect.fn("Campaigns.update")(
      function*(principal: Principal, id: number, input: UpdateCampaignInput) {
        const current = yield* findRow(principal.organizationId, id)
        if (!editableStates.includes(current.state)) {
          return yield* new Conflict({
            message:
              `Cannot change the settings of a campaign that is ${current.state}; settings change only while it is created or paused`
          })
        }
        yield* telephonyExists(principal.organizationId, input.telephony_configuration_id)
        const settings = yield* mergedSettings(current, input)
        const changed = Object.keys(input).filter((key) => (input as Record<string, unknown>)[key] !== undefined)
        const entry = logEntry(
          new Date(),
          "info",
          "settings_updated",
          `Settings changed: ${changed.join(", ") || "none"}`
        )
        const updated = yield* sql`
        UPDATE campaigns
        SET name = ${input.name ?? current.name},
            telephony_configuration_id = ${
          input.telephony_configuration_id === undefined
            ? current.telephony_configuration_id
            : input.telephony_configuration_id
        },
            retry_config = ${JSON.stringify(settings.retry_config)}::jsonb,
            max_concurrency = ${settings.max_concurrency},
            rate_limit_per_second = ${settings.rate_limit_per_second},
            schedule_config = ${
          settings.schedule_config === null ? null : JSON.stringify(settings.schedule_config)
        }::jsonb,
            circuit_breaker = ${JSON.stringify(settings.circuit_breaker)}::jsonb,
            logs = logs || ${JSON.stringify([entry])}::jsonb,
            updated_at = now()
        WHERE id = ${id} AND organization_id = ${principal.organizationId} AND state IN ${sql.in(editableStates)}
        RETURNING id`
        if (updated.length === 0) {
          const now = yield* findRow(principal.organizationId, id)
          return yield* new Conflict({ message: `Cannot change the settings of a campaign that is ${now.state}` })
        }
        return toView(yield* findRow(principal.organizationId, id))
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    /**
     * Applies a lifecycle command in one statement: the UPDATE only matches in an allowed state, so
     * two racing commands cannot both succeed. `extra` adds the command's own column changes;
     * cancelling also withdraws the contacts not yet called, in the same statement.
     */
    const transition = (
      principal: Principal,
      id: number,
      command: CampaignCommand,
      message: string,
      extra: Statement.Statement<unknown> | undefined = undefined,
      condition: Statement.Statement<unknown> | undefined = undefined
    ) =>
      Effect.gen(function*() {
        const { from, to, event } = transitions[command]
        const entry = logEntry(new Date(), "info", event, message)
        const updated = yield* sql<{ id: number }>`
          WITH moved AS (
            UPDATE campaigns
            SET state = ${to}, logs = logs || ${JSON.stringify([entry])}::jsonb, updated_at = now()
                ${extra === undefined ? sql`` : sql`, ${extra}`}
            WHERE id = ${id} AND organization_id = ${principal.organizationId} AND state IN ${sql.in(from)}
                  ${condition === undefined ? sql`` : sql`AND ${condition}`}
            RETURNING id
          ), withdrawn AS (
            UPDATE campaign_contacts SET state = 'cancelled', updated_at = now()
            WHERE ${to === "cancelled"} AND campaign_id IN (SELECT id FROM moved) AND state = 'pending'
          )
          SELECT id FROM moved`
        if (updated.length === 0) {
          const current = yield* findRow(principal.organizationId, id)
          yield* checkAllowed(current, command)
          return yield* new Conflict({ message: refusal(command, current.state) })
        }
        // The dialer here starts, wakes or stops the campaign's actor now rather than at its next poll.
        yield* doorbell.changed(id)
      })

    /** The command's refusal for the campaign as it is, if any: its state, or contacts not all loaded for a start. */
    const checkAllowed = (row: CampaignRow, command: CampaignCommand) => {
      if (!canApply(command, row.state)) return Effect.fail(new Conflict({ message: refusal(command, row.state) }))
      if (command !== "start" || row.import_status === "ready") return Effect.void
      const progress = importProgress(row)
      return Effect.fail(
        new Conflict({
          message: row.import_status === "loading" ? startWhileLoading(progress) : startAfterFailedImport(progress)
        })
      )
    }

    const start = Effect.fn("Campaigns.start")(function*(principal: Principal, id: number) {
      const current = yield* findRow(principal.organizationId, id)
      yield* checkAllowed(current, "start")
      const outbound = yield* telephony.outbound(principal.organizationId, current.telephony_configuration_id)
      yield* preflight(principal.organizationId, {
        provider: outbound.config.provider,
        apiBaseUrl: outbound.api_base_url
      })
      // The configuration is bound at start, so it cannot be deleted from under a running campaign.
      yield* transition(
        principal,
        id,
        "start",
        `Campaign started with ${current.total_rows ?? 0} contacts through "${outbound.name}"`,
        sql`started_at = now(), telephony_configuration_id = ${outbound.id}`,
        // Checked in the same statement: a campaign whose contacts are not all stored never runs.
        sql`import_status = 'ready'`
      )
      return toView(yield* findRow(principal.organizationId, id))
    }, Effect.catchTag("SqlError", Effect.die))

    const pause = Effect.fn("Campaigns.pause")(function*(principal: Principal, id: number) {
      yield* transition(principal, id, "pause", "Campaign paused; calls in progress finish, no new calls are placed")
      return toView(yield* findRow(principal.organizationId, id))
    }, Effect.catchTag("SqlError", Effect.die))

    const resume = Effect.fn("Campaigns.resume")(function*(principal: Principal, id: number) {
      const current = yield* findRow(principal.organizationId, id)
      yield* checkAllowed(current, "resume")
      const outbound = yield* telephony.outbound(principal.organizationId, current.telephony_configuration_id)
      yield* preflight(principal.organizationId, {
        provider: outbound.config.provider,
        apiBaseUrl: outbound.api_base_url
      })
      yield* transition(principal, id, "resume", "Campaign resumed")
      return toView(yield* findRow(principal.organizationId, id))
    }, Effect.catchTag("SqlError", Effect.die))

    const cancel = Effect.fn("Campaigns.cancel")(function*(principal: Principal, id: number) {
      const entry = logEntry(new Date(), "info", transitions.cancel.event, cancelledWhileLoading)
      // While loading there is nothing to withdraw: the import stops at its next statement and clears what it stored.
      const stoppedImport = yield* sql`
        UPDATE campaigns
        SET state = 'cancelled', completed_at = now(), import_status = 'failed',
            import_errors = ${JSON.stringify([cancelledWhileLoading])}::jsonb, import_heartbeat_at = now(),
            logs = logs || ${JSON.stringify([entry])}::jsonb, updated_at = now()
        WHERE id = ${id} AND organization_id = ${principal.organizationId} AND state = 'created' AND import_status = 'loading'
        RETURNING id`
      if (stoppedImport.length === 0) {
        yield* transition(
          principal,
          id,
          "cancel",
          "Campaign cancelled; contacts not yet called will not be called",
          sql`completed_at = now()`
        )
      }
      return toView(yield* findRow(principal.organizationId, id))
    }, Effect.catchTag("SqlError", Effect.die))

    const redial = Effect.fn("Campaigns.redial")(function*(principal: Principal, id: number, input: RedialInput) {
      const parent = yield* findRow(principal.organizationId, id)
      if (!isFinal(parent.state)) {
        return yield* new Conflict({
          message:
            `Cannot redial a campaign that is ${parent.state}; redial is allowed once it is completed, cancelled or failed`
        })
      }
      if (parent.redialed_campaign_id !== null) {
        return yield* new Conflict({
          message: `Campaign ${id} was already redialed as campaign ${parent.redialed_campaign_id}`
        })
      }
      const outcomes = Object.entries(redialOutcomes).filter(([flag]) => input[flag as keyof RedialInput] === true).map(
        ([, outcome]) => outcome
      )
      if (outcomes.length === 0) {
        return yield* ValidationFailed.single(
          ["body"],
          "Choose at least one reason to redial: retry_on_busy, retry_on_no_answer, retry_on_voicemail or retry_on_failed"
        )
      }
      const retryConfig = mergeRetry(parent.retry_config, input.retry_config ?? undefined)
      const name = input.name ?? `${parent.name} (redial)`
      const childId = yield* sql.withTransaction(Effect.gen(function*() {
        const [child] = yield* sql<{ id: number }>`
          INSERT INTO campaigns (organization_id, workflow_id, telephony_configuration_id, name, source_type, source_id,
                                 source_columns, default_region, retry_config, max_concurrency, rate_limit_per_second,
                                 schedule_config, circuit_breaker, parent_campaign_id)
          SELECT organization_id, workflow_id, telephony_configuration_id, ${name}, source_type, source_id,
                 source_columns, default_region, ${
          JSON.stringify(retryConfig)
        }::jsonb, max_concurrency, rate_limit_per_second,
                 schedule_config, circuit_breaker, id
          FROM campaigns WHERE id = ${id}
          RETURNING id`
        const childId = child!.id
        const copied = yield* sql<{ count: number }>`
          WITH copied AS (
            INSERT INTO campaign_contacts (campaign_id, row_number, phone_number, context, greeting_override)
            SELECT ${childId}, row_number, phone_number, context, greeting_override
            FROM campaign_contacts
            WHERE campaign_id = ${id} AND last_outcome IN ${sql.in(outcomes)}
            ORDER BY id
            RETURNING 1
          )
          SELECT count(*)::int AS count FROM copied`
        const count = copied[0]?.count ?? 0
        if (count === 0) {
          return yield* ValidationFailed.single(
            ["body"],
            `No contact of campaign ${id} ended with ${outcomes.join(", ")}; there is nobody to redial`
          )
        }
        const entry = logEntry(
          new Date(),
          "info",
          "redial_created",
          `${count} contacts of campaign ${id} whose last outcome was ${outcomes.join(", ")}`
        )
        yield* sql`
          UPDATE campaigns SET total_rows = ${count}, total_queued_count = ${count}, import_contacts = ${count}, logs = ${
          JSON.stringify([entry])
        }::jsonb
          WHERE id = ${childId}`
        const parentEntry = logEntry(
          new Date(),
          "info",
          "redialed",
          `Redialed as campaign ${childId} (${count} contacts)`
        )
        const linked = yield* sql`
          UPDATE campaigns SET redialed_campaign_id = ${childId}, logs = logs || ${
          JSON.stringify([parentEntry])
        }::jsonb, updated_at = now()
          WHERE id = ${id} AND redialed_campaign_id IS NULL
          RETURNING id`
        if (linked.length === 0) return yield* new Conflict({ message: `Campaign ${id} was already redialed` })
        return childId
      }))
      return toView(yield* findRow(principal.organizationId, childId))
    }, Effect.catchTag("SqlError", Effect.die))

    const progress = Effect.fn("Campaigns.progress")(function*(principal: Principal, id: number) {
      const campaign = yield* findRow(principal.organizationId, id)
      // Contacts count only once the import published them (and counting a loading import's would scan them all).
      const states = campaign.import_status !== "ready" ?
        [] :
        yield* sql<{ state: string; count: number; next_attempt_at: Date | null }>`
        SELECT state, count(*)::int AS count, min(next_attempt_at) FILTER (WHERE state = 'pending') AS next_attempt_at
        FROM campaign_contacts WHERE campaign_id = ${id} GROUP BY state`
      const [live] = yield* sql<{ count: number }>`
        SELECT count(*)::int AS count FROM campaign_attempts WHERE campaign_id = ${id} AND ended_at IS NULL`
      const countOf = (state: string) => states.find((row) => row.state === state)?.count ?? 0
      return {
        campaign_id: id,
        state: campaign.state,
        total_rows: campaign.total_rows ?? 0,
        processed_rows: campaign.processed_rows,
        failed_rows: campaign.failed_rows,
        executed_count: campaign.executed_count,
        total_queued_count: campaign.total_queued_count,
        pending: countOf("pending"),
        dialing: countOf("dialing"),
        completed: countOf("completed"),
        failed: countOf("failed"),
        cancelled: countOf("cancelled"),
        live_calls: live?.count ?? 0,
        next_attempt_at: states.find((row) => row.state === "pending")?.next_attempt_at ?? null,
        started_at: campaign.started_at,
        completed_at: campaign.completed_at,
        import: importProgress(campaign)
      }
    }, Effect.catchTag("SqlError", Effect.die))

    const runs = Effect.fn("Campaigns.runs")(function*(principal: Principal, id: number, paging: Paging) {
      yield* findRow(principal.organizationId, id)
      const [count] = yield* sql<{ total: number }>`
        SELECT count(*)::int AS total FROM runs WHERE campaign_id = ${id} AND organization_id = ${principal.organizationId}`
      const rows = yield* sql<{
        id: number
        name: string
        state: string
        mode: string
        direction: string
        caller_number: string | null
        called_number: string | null
        contact_id: number | null
        disposition: string | null
        end_reason: string | null
        duration_seconds: number
        created_at: Date
        started_at: Date | null
        ended_at: Date | null
      }>`
        SELECT id, name, state, mode, direction, caller_number, called_number, contact_id, disposition, end_reason,
               duration_seconds, created_at, started_at, ended_at
        FROM runs WHERE campaign_id = ${id} AND organization_id = ${principal.organizationId}
        ORDER BY id DESC LIMIT ${paging.limit} OFFSET ${(paging.page - 1) * paging.limit}`
      const total = count?.total ?? 0
      return {
        runs: rows,
        total_count: total,
        page: paging.page,
        limit: paging.limit,
        total_pages: pageCount(total, paging.limit)
      }
    }, Effect.catchTag("SqlError", Effect.die))

    const report = Effect.fn("Campaigns.report")(function*(principal: Principal, id: number) {
      const campaign = yield* findRow(principal.organizationId, id)
      return campaignReport(sql, campaign)
    }, Effect.catchTag("SqlError", Effect.die))

    return Campaigns.of({ create, list, get, update, start, pause, resume, cancel, redial, progress, runs, report })
  })
)
