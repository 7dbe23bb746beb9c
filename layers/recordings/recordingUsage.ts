import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What still plays a clip: published graphs of the organization (as an audio greeting or audio
 * transition speech) and contacts of its running or paused campaigns (as a greeting override).
 * JSON containment keeps this to two indexed-scope queries, whatever the graph's layout.
 */
export const recordingUsers = (sql: SqlClient.SqlClient, organizationId: number, recordingId: string) =>
  Effect.gen(function*() {
    const workflows = yield* sql<{ id: number; name: string }>`
      SELECT w.id, w.name FROM workflows w
      JOIN workflow_definitions d ON d.workflow_id = w.id AND d.version_status = 'published'
      WHERE w.organization_id = ${organizationId}
        AND (d.workflow_definition @> ${
      JSON.stringify({ nodes: [{ data: { greeting_recording_id: recordingId } }] })
    }::jsonb
          OR d.workflow_definition @> ${
      JSON.stringify({ edges: [{ data: { transition_speech_recording_id: recordingId } }] })
    }::jsonb)
      ORDER BY w.id`
    const campaigns = yield* sql<{ id: number; name: string; state: string }>`
      SELECT c.id, c.name, c.state FROM campaigns c
      WHERE c.organization_id = ${organizationId} AND c.state IN ('running', 'paused')
        AND EXISTS (
          SELECT 1 FROM campaign_contacts cc
          WHERE cc.campaign_id = c.id
            AND cc.greeting_override @> ${JSON.stringify({ type: "audio", recording_id: recordingId })}::jsonb)
      ORDER BY c.id`
    return { workflows, campaigns }
  })

export const describeUsers = (
  users: {
    workflows: ReadonlyArray<{ id: number; name: string }>
    campaigns: ReadonlyArray<{ id: number; name: string; state: string }>
  }
) =>
  [
    ...users.workflows.map((workflow) => `the published version of workflow "${workflow.name}" (id ${workflow.id})`),
    ...users.campaigns.map((campaign) =>
      `contacts of ${campaign.state} campaign "${campaign.name}" (id ${campaign.id})`
    )
  ].join("; ")
