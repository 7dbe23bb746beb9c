import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { RECORDING_ID, RECORDING_ID_RULE } from "../../../src/recordings/recordingIds.ts"
import { ClipUploadGrant, Recording } from "../../../src/recordings/recordingRecord.ts"
import {
  HttpConflict,
  HttpForbidden,
  HttpNotFound,
  HttpPayloadTooLarge,
  HttpUpstreamFailed,
  HttpValidationFailed
} from "../../errors.ts"
import { bodySchema, IdFromPath, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

const RecordingId = Schema.String.pipe(
  Schema.pattern(RECORDING_ID, { message: () => `recording_id must be ${RECORDING_ID_RULE}` })
)
const Label = Schema.String.pipe(Schema.maxLength(200))
const Transcript = Schema.String.pipe(Schema.maxLength(5000))

export const UploadUrlRequest = bodySchema("RecordingUploadUrl", {
  files: Schema.Array(
    Schema.Struct({
      filename: Schema.optional(Schema.String.pipe(Schema.maxLength(255))),
      mime_type: Schema.String.annotations({ description: "audio/wav, audio/mpeg or audio/x-mulaw (raw 8 kHz μ-law)" }),
      file_size: Schema.optional(Schema.Int.pipe(Schema.positive()))
    })
  ).pipe(Schema.minItems(1), Schema.maxItems(20))
})

/** A clip and its upload grant are defined once, in src/recordings/recordingRecord.ts. */
export const UploadUrlItem = ClipUploadGrant

export const UploadUrlResponse = Schema.Struct({ items: Schema.Array(UploadUrlItem) }).annotations({
  identifier: "RecordingUploadUrlResponse"
})

export const RegisterRecordingsRequest = bodySchema("RegisterRecordings", {
  recordings: Schema.Array(
    Schema.Struct({
      recording_id: RecordingId,
      storage_key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(400)),
      label: Schema.optional(Label),
      transcript: Schema.optional(Schema.NullOr(Transcript)),
      workflow_id: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.positive(), Schema.brand("WorkflowId"))))
    })
  ).pipe(Schema.minItems(1), Schema.maxItems(20))
})

export const UpdateRecordingRequest = bodySchema("UpdateRecording", {
  label: Schema.optional(Label),
  transcript: Schema.optional(Schema.NullOr(Transcript))
})

export const RecordingResponse = Recording

export const RecordingListResponse = Schema.Struct({
  recordings: Schema.Array(RecordingResponse),
  total: Schema.Int
}).annotations({ identifier: "WorkflowRecordingListResponse" })

export const DeleteRecordingResponse = Schema.Struct({ success: Schema.Boolean, message: Schema.String })

export const RecordingListQuery = querySchema("RecordingList", {
  workflow_id: Schema.optional(IdFromPath.pipe(Schema.brand("WorkflowId")))
})

const RecordingPath = pathSchema("Recording", {
  id: Schema.String.pipe(Schema.pattern(RECORDING_ID, { message: () => "id must be a recording_id or a numeric id" }))
})

export const RecordingsApi = HttpApiGroup.make("recordings")
  .annotate(
    OpenApi.Description,
    "Recorded audio clips for greetings and transitions, named by a `recording_id` unique in the organization. Listing needs `agents:read`, the rest `agents:write`."
  )
  .add(
    HttpApiEndpoint.post("uploadUrls", "/upload-url")
      .annotate(OpenApi.Summary, "Get recording upload URLs")
      .annotate(
        OpenApi.Description,
        "Signed URLs to `PUT` audio files to (WAV, MP3 or raw 8 kHz μ-law), each with a free `recording_id` to register it under."
      )
      .setPayload(UploadUrlRequest)
      .addSuccess(UploadUrlResponse)
      .addError(HttpPayloadTooLarge)
  )
  .add(
    HttpApiEndpoint.post("register", "/")
      .annotate(OpenApi.Summary, "Register uploaded recordings")
      .annotate(
        OpenApi.Description,
        "Decodes, checks and stores each uploaded clip in the forms calls play; all clips of the request or none. 422 naming the item for an unsupported or too long file; 409 for a `recording_id` already used."
      )
      .setPayload(RegisterRecordingsRequest)
      .addSuccess(Schema.Struct({ recordings: Schema.Array(RecordingResponse) }))
      .addError(HttpPayloadTooLarge)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .annotate(OpenApi.Summary, "List recordings")
      .annotate(OpenApi.Description, "The organization's clips, optionally only those of one workflow.")
      .setUrlParams(RecordingListQuery)
      .addSuccess(RecordingListResponse)
  )
  .add(
    HttpApiEndpoint.get("audio", "/:id/audio")
      .annotate(OpenApi.Summary, "Listen to a recording")
      .annotate(
        OpenApi.Description,
        "The clip as calls play it (16 kHz mono PCM16), in a WAV file; addressed by `recording_id`."
      )
      .setPath(RecordingPath)
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "audio/wav" }).annotations({ description: "audio/wav" }))
      .addError(HttpNotFound)
      .addError(HttpUpstreamFailed)
  )
  .add(
    HttpApiEndpoint.patch("update", "/:id")
      .annotate(OpenApi.Summary, "Change a recording")
      .annotate(OpenApi.Description, "Changes a clip's label or transcript; addressed by `recording_id` or numeric id.")
      .setPath(RecordingPath)
      .setPayload(UpdateRecordingRequest)
      .addSuccess(RecordingResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.del("remove", "/:id")
      .annotate(OpenApi.Summary, "Delete a recording")
      .annotate(
        OpenApi.Description,
        "Deletes a clip; addressed by `recording_id` or numeric id. 409 naming the users while a published workflow or a running or paused campaign uses it."
      )
      .setPath(RecordingPath)
      .addSuccess(DeleteRecordingResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .addError(HttpForbidden)
  .addError(HttpValidationFailed)
  .middleware(V1Auth)
  .prefix("/api/v1/workflow-recordings")
