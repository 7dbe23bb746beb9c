import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { RecordingCatalog } from "../../services/Recordings.ts"
import { spokenTextOf } from "../../src/recordings/recordingReferences.ts"

export const RecordingCatalogLive = Layer.effect(
  RecordingCatalog,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const existing = Effect.fn("RecordingCatalog.existing")(function*(organizationId: number, ids: Iterable<string>) {
      const wanted = [...new Set(ids)]
      if (wanted.length === 0) return new Set<string>()
      const rows = yield* sql<{ recording_id: string }>`
        SELECT recording_id FROM workflow_recordings
        WHERE organization_id = ${organizationId} AND recording_id IN ${sql.in(wanted)}`
      return new Set(rows.map((row) => row.recording_id))
    }, Effect.orDie)

    const allIds = Effect.fn("RecordingCatalog.allIds")(function*(organizationId: number) {
      const rows = yield* sql<{ recording_id: string }>`
        SELECT recording_id FROM workflow_recordings WHERE organization_id = ${organizationId}`
      return new Set(rows.map((row) => row.recording_id))
    }, Effect.orDie)

    const spokenTexts = Effect.fn("RecordingCatalog.spokenTexts")(
      function*(organizationId: number, ids: Iterable<string>) {
        const wanted = [...new Set(ids)]
        if (wanted.length === 0) return new Map<string, string>()
        const rows = yield* sql<{ recording_id: string; label: string; transcript: string | null }>`
        SELECT recording_id, label, transcript FROM workflow_recordings
        WHERE organization_id = ${organizationId} AND recording_id IN ${sql.in(wanted)}`
        return new Map(rows.map((row) => [row.recording_id, spokenTextOf(row)]))
      },
      Effect.orDie
    )

    return RecordingCatalog.of({ existing, allIds, spokenTexts })
  })
)
