import { Context, type Effect } from "effect"
import type { Conflict, NotFound, PayloadTooLarge, UpstreamFailed, ValidationFailed } from "../src/domain/errors.ts"
import type { WorkflowId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { ClipUploadGrant, Recording } from "../src/recordings/recordingRecord.ts"

export interface ClipUploadRequest {
  readonly fileName?: string | undefined
  /** audio/wav, audio/mpeg or audio/x-mulaw (and their common aliases). */
  readonly contentType: string
  readonly fileSize?: number | undefined
}

export interface NewRecording {
  readonly recording_id: string
  readonly storage_key: string
  readonly label?: string | undefined
  readonly transcript?: string | null | undefined
  readonly workflow_id?: WorkflowId | null | undefined
}

export interface RecordingEdit {
  readonly label?: string | undefined
  /** `null` clears the transcript. */
  readonly transcript?: string | null | undefined
}

/** A clip and its upload grant are defined once, in src/recordings/recordingRecord.ts. */
export type RecordingView = Recording

export type PlaybackFormat = "ulaw_8k" | "pcm_16k"

/**
 * The organization's library of recorded clips (table `workflow_recordings`). `ref` is a clip's
 * public `recording_id` or, failing that, its numeric `id`. Another organization's clip is NotFound.
 */
export interface RecordingsShape {
  /** Signed upload URLs, one per file, bound to its audio content type and the size cap. */
  readonly uploadUrls: (
    principal: Principal,
    files: ReadonlyArray<ClipUploadRequest>
  ) => Effect.Effect<ReadonlyArray<ClipUploadGrant>, ValidationFailed | PayloadTooLarge>
  /**
   * Decodes, checks and converts each uploaded clip, then stores them all or none: a bad clip
   * (422), an oversized one (413) or a taken recording_id (409) leaves nothing behind.
   */
  readonly register: (
    principal: Principal,
    recordings: ReadonlyArray<NewRecording>
  ) => Effect.Effect<ReadonlyArray<RecordingView>, ValidationFailed | PayloadTooLarge | Conflict>
  readonly list: (
    principal: Principal,
    filter: { readonly workflowId?: WorkflowId | undefined }
  ) => Effect.Effect<ReadonlyArray<RecordingView>>
  readonly update: (principal: Principal, ref: string, edit: RecordingEdit) => Effect.Effect<RecordingView, NotFound>
  /** Refused (409) while a published graph, or a pending contact of a running or paused campaign, uses the clip. */
  readonly remove: (principal: Principal, ref: string) => Effect.Effect<void, NotFound | Conflict>
  /** A clip in a form calls play (headerless), for the voice channel. */
  readonly playback: (
    organizationId: number,
    recordingId: string,
    format: PlaybackFormat
  ) => Effect.Effect<Uint8Array, NotFound | UpstreamFailed>
}

export class Recordings extends Context.Tag("talkgraph/Recordings")<Recordings, RecordingsShape>() {}

/**
 * Read-only lookups other areas make against the library: graph validation, contact CSV
 * validation and the conversation engine's text stand-in for a clip. Needs only the database.
 */
export interface RecordingCatalogShape {
  /** Which of `ids` are recordings of the organization. */
  readonly existing: (organizationId: number, ids: Iterable<string>) => Effect.Effect<ReadonlySet<string>>
  /** Every recording id of the organization. */
  readonly allIds: (organizationId: number) => Effect.Effect<ReadonlySet<string>>
  /** For each of `ids` that exists: its transcript, else its label. */
  readonly spokenTexts: (organizationId: number, ids: Iterable<string>) => Effect.Effect<ReadonlyMap<string, string>>
}

export class RecordingCatalog
  extends Context.Tag("talkgraph/RecordingCatalog")<RecordingCatalog, RecordingCatalogShape>()
{}
