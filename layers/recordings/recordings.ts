import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import {
  type ClipUploadRequest,
  type NewRecording,
  type PlaybackFormat,
  type RecordingEdit,
  Recordings
} from "../../services/Recordings.ts"
import { Storage } from "../../services/Storage.ts"
import { StoredObjects } from "../../services/StoredObjects.ts"
import { AudioRejected } from "../../src/audio/audioRejected.ts"
import { transcodeClip, type TranscodedClip } from "../../src/audio/clipTranscoding.ts"
import { Conflict, type FieldProblem, NotFound, PayloadTooLarge, ValidationFailed } from "../../src/domain/errors.ts"
import type { WorkflowId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { CLIP_CONTENT_TYPES, clipKindOf } from "../../src/recordings/clipContentTypes.ts"
import { newRecordingId } from "../../src/recordings/recordingIds.ts"
import { newUploadKey, parseUploadKey, playbackKeys } from "../../src/recordings/recordingKeys.ts"
import { recordingsConfig } from "../../src/recordings/recordingsConfig.ts"
import { mediaTypeOf } from "../../src/storage/uploadKeys.ts"
import { readAll } from "./clipBytes.ts"
import { byReference, type RecordingRow, selectRecordings, toView } from "./recordingRows.ts"
import { describeUsers, recordingUsers } from "./recordingUsage.ts"

const pauseForOtherWork = () => new Promise<void>((resolve) => setImmediate(resolve))

const isUniqueViolation = (error: { readonly cause?: unknown }) =>
  typeof error.cause === "object" && error.cause !== null && (error.cause as { code?: unknown }).code === "23505"

interface ReadyClip {
  readonly input: NewRecording
  readonly kind: string
  readonly size: number
  readonly clip: TranscodedClip
  readonly keys: { readonly ulaw8k: string; readonly pcm16k: string }
}

export const RecordingsLive = Layer.effect(
  Recordings,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const storage = yield* Storage
    const storedObjects = yield* StoredObjects
    const config = yield* recordingsConfig.pipe(Effect.orDie)
    const maxDurationMs = config.maxDurationSeconds * 1000

    const uploadUrls = Effect.fn("Recordings.uploadUrls")(function*(
      principal: Principal,
      files: ReadonlyArray<ClipUploadRequest>
    ) {
      const problems: Array<FieldProblem> = []
      files.forEach((file, index) => {
        if (!clipKindOf(mediaTypeOf(file.contentType))) {
          problems.push({
            loc: ["body", "files", index, "mime_type"],
            msg: `mime_type must be one of ${CLIP_CONTENT_TYPES.join(", ")}`,
            type: "value_error"
          })
        }
      })
      if (problems.length > 0) return yield* new ValidationFailed({ message: "Unsupported audio type", problems })
      const oversized = files.findIndex((file) => file.fileSize !== undefined && file.fileSize > config.maxBytes)
      if (oversized >= 0) {
        return yield* new PayloadTooLarge({
          message: `File ${oversized + 1} is larger than the ${config.maxBytes}-byte limit for a clip`
        })
      }
      yield* storedObjects.ensureRoom(
        principal.organizationId,
        files.reduce((total, file) => total + (file.fileSize ?? 0), 0)
      )
      const taken = yield* sql<{ recording_id: string }>`
        SELECT recording_id FROM workflow_recordings WHERE organization_id = ${principal.organizationId}`.pipe(
        Effect.orDie
      )
      const used = new Set(taken.map((row) => row.recording_id))
      return yield* Effect.forEach(files, (file) =>
        Effect.gen(function*() {
          const contentType = mediaTypeOf(file.contentType)
          const key = newUploadKey(principal.organizationId, clipKindOf(contentType)!, file.fileName)
          const grant = yield* storage.presignUpload(key, {
            contentType,
            maxBytes: config.maxBytes,
            expiresInSeconds: storage.limits.urlTtlSeconds,
            exactBytes: file.fileSize
          })
          let suggestion = newRecordingId()
          while (used.has(suggestion)) suggestion = newRecordingId()
          used.add(suggestion)
          return {
            upload_url: grant.url,
            storage_key: key,
            recording_id: suggestion,
            content_type: contentType,
            expires_in: grant.expiresInSeconds,
            max_size_bytes: file.fileSize ?? config.maxBytes
          }
        }))
    })

    /** Checks everything that needs no audio: ids, keys and workflows, all problems at once. */
    const checkRequests = (principal: Principal, items: ReadonlyArray<NewRecording>) =>
      Effect.gen(function*() {
        const problems: Array<FieldProblem> = []
        const problem = (index: number, field: string, msg: string, type = "value_error") =>
          problems.push({ loc: ["body", "recordings", index, field], msg, type })
        const seen = new Map<string, number>()
        items.forEach((item, index) => {
          const earlier = seen.get(item.recording_id)
          if (earlier !== undefined) {
            problem(
              index,
              "recording_id",
              `recording_id "${item.recording_id}" is also used by item ${earlier}`,
              "recording_id_duplicate"
            )
          }
          seen.set(item.recording_id, index)
          const upload = parseUploadKey(item.storage_key)
          if (!upload || upload.organizationId !== principal.organizationId) {
            problem(
              index,
              "storage_key",
              "storage_key is not a clip upload of this organization; use a storage_key from /api/v1/workflow-recordings/upload-url",
              "storage_key_invalid"
            )
          }
        })
        const workflowIds = [...new Set(items.flatMap((item) => (item.workflow_id == null ? [] : [item.workflow_id])))]
        if (workflowIds.length > 0) {
          const found = yield* sql<{ id: number }>`
            SELECT id FROM workflows WHERE organization_id = ${principal.organizationId} AND id IN ${
            sql.in(workflowIds)
          }`
          const known = new Set(found.map((row) => row.id))
          items.forEach((item, index) => {
            if (item.workflow_id != null && !known.has(item.workflow_id)) {
              problem(index, "workflow_id", `Workflow ${item.workflow_id} not found`, "workflow_not_found")
            }
          })
        }
        if (problems.length > 0) {
          return yield* new ValidationFailed({ message: "The recordings cannot be registered", problems })
        }
        const taken = yield* sql<{ recording_id: string }>`
          SELECT recording_id FROM workflow_recordings
          WHERE organization_id = ${principal.organizationId} AND recording_id IN ${sql.in([...seen.keys()])}`
        if (taken.length > 0) {
          return yield* new Conflict({
            message: `recording_id ${
              taken.map((row) => `"${row.recording_id}"`).join(", ")
            } is already in use in this organization`
          })
        }
      })

    /** Reads, decodes and converts one uploaded clip; stores nothing. */
    const prepare = (principal: Principal, item: NewRecording, index: number) =>
      Effect.gen(function*() {
        const { kind } = parseUploadKey(item.storage_key)!
        const at = ["body", "recordings", index, "storage_key"]
        const size = yield* storage.size(item.storage_key).pipe(
          Effect.catchTag("NotFound", () =>
            Effect.fail(ValidationFailed.single(at, "No file has been uploaded to storage_key yet", "upload_missing")))
        )
        if (size > config.maxBytes) {
          return yield* new PayloadTooLarge({
            message: `Clip ${index + 1} is ${size} bytes; the limit is ${config.maxBytes} bytes`
          })
        }
        const bytes = yield* Effect.scoped(Effect.flatMap(storage.read(item.storage_key), (body) =>
          readAll(body, config.maxBytes))).pipe(
            Effect.catchTag("NotFound", () =>
              Effect.fail(
                ValidationFailed.single(at, "No file has been uploaded to storage_key yet", "upload_missing")
              ))
          )
        const clip = yield* Effect.tryPromise({
          try: () =>
            transcodeClip(bytes, kind, { maxDurationMs, pause: pauseForOtherWork }),
          catch: (error) =>
            error
        }).pipe(
          Effect.catchAll((error) =>
            error instanceof AudioRejected
              ? Effect.fail(ValidationFailed.single(at, error.message, error.reason))
              : Effect.die(error)
          )
        )
        return { input: item, kind, size, clip, keys: playbackKeys(principal.organizationId) } satisfies ReadyClip
      })

    const removeObjects = (keys: ReadonlyArray<string>) =>
      Effect.forEach(
        keys,
        (key) =>
          storage.remove(key).pipe(Effect.catchAll(() =>
            Effect.logWarning("A recording's audio could not be deleted").pipe(Effect.annotateLogs({ key }))
          )),
        { discard: true }
      )

    const register = Effect.fn("Recordings.register")(
      function*(principal: Principal, items: ReadonlyArray<NewRecording>) {
        yield* checkRequests(principal, items)
        // One clip at a time: each decode already yields between slices, and this bounds memory.
        const ready = yield* Effect.forEach(items, (item, index) => prepare(principal, item, index))
        const written = ready.flatMap((clip) => [clip.keys.ulaw8k, clip.keys.pcm16k])
        const ids = yield* Effect.gen(function*() {
          for (const clip of ready) {
            yield* storage.write(clip.keys.ulaw8k, clip.clip.ulaw8k, "audio/basic")
            yield* storage.write(clip.keys.pcm16k, clip.clip.pcm16k, "audio/L16;rate=16000")
          }
          return yield* sql.withTransaction(Effect.forEach(ready, ({ clip, input, keys, size }) =>
            sql<{ id: number }>`
            INSERT INTO workflow_recordings
              (organization_id, recording_id, workflow_id, label, transcript, storage_key, storage_backend, ulaw_8k_key, pcm_16k_key,
               source_format, source_sample_rate, source_channels, duration_ms, size_bytes, created_by)
            VALUES (${principal.organizationId}, ${input.recording_id}, ${input.workflow_id ?? null},
                    ${input.label?.trim() || input.recording_id}, ${
              input.transcript?.trim() || null
            }, ${input.storage_key},
                    ${storage.backend}, ${keys.ulaw8k}, ${keys.pcm16k}, ${clip.source.format}, ${clip.source.sampleRate},
                    ${clip.source.channels}, ${clip.durationMs}, ${size}, ${principal.userId})
            RETURNING id`.pipe(Effect.map((rows) => rows[0]!.id))))
        }).pipe(
          Effect.catchTag("SqlError", (error) =>
            isUniqueViolation(error)
              ? Effect.fail(
                new Conflict({ message: "A recording_id of this request was registered meanwhile; choose another" })
              )
              : Effect.die(error)),
          Effect.catchTag("UpstreamFailed", Effect.die),
          Effect.tapErrorCause(() => removeObjects(written))
        )
        const rows = yield* sql<RecordingRow>`${selectRecordings(sql)} WHERE id IN ${sql.in(ids)} ORDER BY id`
        return rows.map(toView)
      },
      Effect.catchTag("SqlError", Effect.die),
      Effect.catchTag("UpstreamFailed", Effect.die)
    )

    const list = Effect.fn("Recordings.list")(
      function*(principal: Principal, filter: { readonly workflowId?: WorkflowId | undefined }) {
        const rows = yield* sql<RecordingRow>`
        ${selectRecordings(sql)}
        WHERE organization_id = ${principal.organizationId}
          ${filter.workflowId === undefined ? sql`` : sql`AND workflow_id = ${filter.workflowId}`}
        ORDER BY id DESC`
        return rows.map(toView)
      },
      Effect.orDie
    )

    const find = (principal: Principal, ref: string) =>
      byReference(sql, principal.organizationId, ref).pipe(
        Effect.flatMap((
          rows
        ) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Recording", id: ref }))))
      )

    const update = Effect.fn("Recordings.update")(function*(principal: Principal, ref: string, edit: RecordingEdit) {
      const row = yield* find(principal, ref)
      const label = edit.label === undefined ? row.label : edit.label.trim() || row.recording_id
      const transcript = edit.transcript === undefined ? row.transcript : edit.transcript?.trim() || null
      const [updated] = yield* sql<RecordingRow>`
        UPDATE workflow_recordings SET label = ${label}, transcript = ${transcript}, updated_at = now()
        WHERE id = ${row.id}
        RETURNING id, recording_id, organization_id, workflow_id, label, transcript, storage_key, storage_backend,
                  ulaw_8k_key, pcm_16k_key, source_format, source_sample_rate, source_channels, duration_ms, size_bytes,
                  created_by, created_at, updated_at`
      return toView(updated!)
    }, Effect.catchTag("SqlError", Effect.die))

    const remove = Effect.fn("Recordings.remove")(function*(principal: Principal, ref: string) {
      const row = yield* sql.withTransaction(Effect.gen(function*() {
        const found = yield* find(principal, ref)
        // Locked so a concurrent delete of the same clip waits and then finds nothing.
        yield* sql`SELECT id FROM workflow_recordings WHERE id = ${found.id} FOR UPDATE`
        const users = yield* recordingUsers(sql, principal.organizationId, found.recording_id)
        if (users.workflows.length > 0 || users.campaigns.length > 0) {
          return yield* new Conflict({
            message: `Recording "${found.recording_id}" is in use by ${
              describeUsers(users)
            }; remove it from there first`
          })
        }
        yield* sql`DELETE FROM workflow_recordings WHERE id = ${found.id}`
        return found
      }))
      yield* removeObjects([row.ulaw_8k_key, row.pcm_16k_key, row.storage_key])
    }, Effect.catchTag("SqlError", Effect.die))

    const playback = Effect.fn("Recordings.playback")(
      function*(organizationId: number, recordingId: string, format: PlaybackFormat) {
        const [row] = yield* sql<{ ulaw_8k_key: string; pcm_16k_key: string }>`
        SELECT ulaw_8k_key, pcm_16k_key FROM workflow_recordings
        WHERE organization_id = ${organizationId} AND recording_id = ${recordingId}`.pipe(Effect.orDie)
        if (!row) return yield* new NotFound({ resource: "Recording", id: recordingId })
        const key = format === "ulaw_8k" ? row.ulaw_8k_key : row.pcm_16k_key
        return yield* Effect.scoped(
          Effect.flatMap(
            storage.read(key),
            (body) => readAll(body, Number.MAX_SAFE_INTEGER).pipe(Effect.catchTag("PayloadTooLarge", Effect.die))
          )
        )
      }
    )

    return Recordings.of({ uploadUrls, register, list, update, remove, playback })
  })
)
