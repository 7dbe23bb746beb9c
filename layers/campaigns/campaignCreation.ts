import { SqlClient } from "@effect/sql"
import { Config, Effect } from "effect"
import type { CreateCampaignInput } from "../../services/Campaigns.ts"
import { ContactImports } from "../../services/ContactImports.ts"
import { RecordingCatalog } from "../../services/Recordings.ts"
import { Storage } from "../../services/Storage.ts"
import { PayloadTooLarge, ValidationFailed } from "../../src/domain/errors.ts"
import type { CampaignId, OrganizationId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { requiredVariables } from "../../src/graph/templateVariables.ts"
import { asRegion } from "../../src/phone/mod.ts"
import { belongsTo } from "../../src/storage/uploadKeys.ts"
import { makeCampaignLookups } from "./campaignLookups.ts"
import { toView } from "./campaignRows.ts"
import { mergedSettings } from "./mergedSettings.ts"
import { makeVoicemailRecordingCheck } from "./voicemailRecordingCheck.ts"

/**
 * Files up to this size are loaded before the create request answers (about 25,000 contacts, well
 * under a second); larger ones in the background (CAMPAIGN_IMPORT_INLINE_BYTES).
 */
const DEFAULT_INLINE_IMPORT_BYTES = 1024 * 1024

const sourceProblem = (msg: string) => ValidationFailed.single(["body", "source_id"], msg)

/** `Campaigns.create`: a campaign from an uploaded CSV, its contacts loaded now or in the background. */
export const makeCampaignCreation = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const storage = yield* Storage
  const recordings = yield* RecordingCatalog
  const imports = yield* ContactImports
  const { findRow, findWorkflow, poolNumbersExist, telephonyExists } = yield* makeCampaignLookups
  const voicemailRecordingExists = yield* makeVoicemailRecordingCheck
  const inlineImportBytes = yield* Config.integer("CAMPAIGN_IMPORT_INLINE_BYTES").pipe(
    Config.validate({ message: "must be 0 or more", validation: (bytes) => bytes >= 0 }),
    Config.withDefault(DEFAULT_INLINE_IMPORT_BYTES)
  )

  /** The region of numbers written without a country code: the request's, else the telephony configuration's. */
  const regionFor = (organizationId: OrganizationId, input: CreateCampaignInput) =>
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

  /** The uploaded file's size, refused when nothing was uploaded yet or when it is over the upload limit. */
  const uploadedSize = (sourceId: string) =>
    Effect.gen(function*() {
      const size = yield* storage.size(sourceId).pipe(
        Effect.catchTag("NotFound", () => Effect.fail(sourceProblem("No file has been uploaded to source_id yet")))
      )
      if (size > storage.limits.maxBytes) {
        return yield* new PayloadTooLarge({
          message: `The contacts CSV is larger than ${storage.limits.maxBytes} bytes`
        })
      }
      return size
    })

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
    yield* poolNumbersExist(organizationId, input.telephony_configuration_id ?? null, settings.caller_id_pool)
    yield* voicemailRecordingExists(organizationId, settings.voicemail)
    const region = yield* regionFor(organizationId, input)
    const size = yield* uploadedSize(input.source_id)
    const required = requiredVariables(workflow.workflow_definition ?? {})
    const recordingIds = yield* recordings.allIds(organizationId)
    const [row] = yield* sql<{ id: CampaignId }>`
      INSERT INTO campaigns (organization_id, workflow_id, telephony_configuration_id, name, source_type, source_id,
                             default_region, retry_config, max_concurrency, rate_limit_per_second, schedule_config, calling_hours,
                             caller_id_pool, voicemail, circuit_breaker, logs, import_status, import_owner, import_heartbeat_at, import_bytes_total)
      VALUES (${organizationId}, ${workflow.id}, ${input.telephony_configuration_id ?? null}, ${input.name}, 'csv',
              ${input.source_id}, ${region ?? null}, ${JSON.stringify(settings.retry_config)}::jsonb,
              ${settings.max_concurrency}, ${settings.rate_limit_per_second},
              ${settings.schedule_config === null ? null : JSON.stringify(settings.schedule_config)}::jsonb,
              ${settings.calling_hours === null ? null : JSON.stringify(settings.calling_hours)}::jsonb,
              ${settings.caller_id_pool === null ? null : JSON.stringify(settings.caller_id_pool)}::jsonb,
              ${settings.voicemail === null ? null : JSON.stringify(settings.voicemail)}::jsonb,
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

  return { create }
})
