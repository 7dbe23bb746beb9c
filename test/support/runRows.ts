import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { channelOfMode } from "../../src/usage/channels.ts"
import type { RunningServer } from "./server.ts"

/**
 * Runs written straight into the database, the way the conversation engine will write them,
 * so usage reports can be tested before anything places calls.
 */
export interface RunSeed {
  readonly workflowId: number
  readonly name?: string
  readonly mode?: string
  readonly direction?: "inbound" | "outbound"
  readonly callerNumber?: string | null
  readonly calledNumber?: string | null
  readonly campaignId?: number | null
  readonly disposition?: string | null
  readonly durationSeconds?: number
  readonly serviceTokens?: number
  readonly createdAt?: string
  readonly recordingKey?: string | null
  readonly transcriptKey?: string | null
  readonly initialContext?: Record<string, unknown>
  readonly gatheredContext?: Record<string, unknown>
}

export const insertWorkflow = (server: RunningServer, organizationId: number, name = "Support agent") =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ id: number }>`
      INSERT INTO workflows (organization_id, workflow_uuid, name)
      VALUES (${organizationId}, ${crypto.randomUUID()}, ${name}) RETURNING id`
    return row!.id
  }))

/** A bare campaign row for runs to point at (campaign_id references campaigns). */
export const insertCampaign = (
  server: RunningServer,
  organizationId: number,
  workflowId: number,
  name = "Spring outreach"
) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ id: number }>`
      INSERT INTO campaigns (organization_id, workflow_id, name, source_type, source_id, retry_config, circuit_breaker)
      VALUES (${organizationId}, ${workflowId}, ${name}, 'csv', 'contacts.csv', '{}', '{}') RETURNING id`
    return row!.id
  }))

/** Inserts runs in order and returns their ids (ascending, in the order given). */
export const insertRuns = (server: RunningServer, organizationId: number, seeds: ReadonlyArray<RunSeed>) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids: Array<number> = []
    for (const seed of seeds) {
      const mode = seed.mode ?? "twilio"
      const disposition = seed.disposition ?? null
      const [row] = yield* sql<{ id: number }>`
        INSERT INTO runs ${
        sql.insert({
          organization_id: organizationId,
          workflow_id: seed.workflowId,
          name: seed.name ?? `run-${ids.length + 1}`,
          mode,
          channel: channelOfMode(mode),
          direction: seed.direction ?? "outbound",
          state: "completed",
          caller_number: seed.callerNumber === undefined ? "+15550000001" : seed.callerNumber,
          called_number: seed.calledNumber === undefined ? "+15550000002" : seed.calledNumber,
          campaign_id: seed.campaignId ?? null,
          disposition,
          duration_seconds: seed.durationSeconds ?? 60,
          service_tokens: seed.serviceTokens ?? 100,
          created_at: new Date(seed.createdAt ?? "2024-05-15T12:00:00Z"),
          recording_key: seed.recordingKey ?? null,
          transcript_key: seed.transcriptKey ?? null,
          initial_context: JSON.stringify(seed.initialContext ?? {}),
          gathered_context: JSON.stringify(seed.gatheredContext ?? { mapped_call_disposition: disposition })
        })
      }
        RETURNING id`
      ids.push(row!.id)
    }
    return ids
  }))

export const setOrganizationTimezone = (server: RunningServer, organizationId: number, timezone: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE organizations SET timezone = ${timezone} WHERE id = ${organizationId}`
  }))
