import { Schema } from "effect"
import { OrganizationId, RecordingId, WorkflowId } from "../domain/ids.ts"
import { Timestamp } from "../domain/wireTypes.ts"

/**
 * A clip of the organization's recordings library (WorkflowRecordingResponse). The one
 * definition: the service's view is its type, the HTTP response its encoding, and the row type
 * adds the keys of the converted forms. `id` is the row's number; `recording_id` the public name
 * graphs and contact lists use.
 */
export const Recording = Schema.Struct({
  id: RecordingId,
  recording_id: Schema.String,
  organization_id: OrganizationId,
  workflow_id: Schema.NullOr(WorkflowId),
  label: Schema.String,
  transcript: Schema.NullOr(Schema.String),
  storage_key: Schema.String,
  storage_backend: Schema.String,
  source_format: Schema.String,
  source_sample_rate: Schema.Int,
  source_channels: Schema.Int,
  duration_ms: Schema.Int,
  size_bytes: Schema.Int,
  created_by: Schema.NullOr(Schema.Int),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "WorkflowRecordingResponse" })
export type Recording = typeof Recording.Type

/** Where to upload one clip (RecordingUploadUrlItem). */
export const ClipUploadGrant = Schema.Struct({
  upload_url: Schema.String,
  storage_key: Schema.String,
  /** A free public id to register the clip under (any other free id may be used instead). */
  recording_id: Schema.String.annotations({ description: "A free recording_id to register the clip under" }),
  content_type: Schema.String,
  expires_in: Schema.Int,
  max_size_bytes: Schema.Int
}).annotations({ identifier: "RecordingUploadUrlItem" })
export type ClipUploadGrant = typeof ClipUploadGrant.Type
