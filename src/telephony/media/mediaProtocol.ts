import type { ToolCallTaken } from "../../conversation/conversationState.ts"
import type { TranscriptTurn } from "../../conversation/transcript.ts"

/**
 * One provider's media-stream protocol, as the call session sees it: provider messages in,
 * internal events out, and the session's audio and controls framed the provider's way.
 * Pure and per connection (a protocol remembers its stream id once started).
 */
export type InboundMedia =
  | {
    readonly _tag: "Started"
    readonly streamId: string | null
    /** The provider's call id, when the stream carries it (for hanging up). */
    readonly callId: string | null
    readonly parameters: Readonly<Record<string, string>>
  }
  /** Mono PCM16 at the protocol's `sampleRate`, in the provider's order. */
  | { readonly _tag: "Audio"; readonly pcm: Int16Array }
  /** A playback marker came back: the audio queued before it has played (or was cleared). */
  | { readonly _tag: "Played"; readonly name: string }
  | { readonly _tag: "Dtmf"; readonly digit: string }
  | { readonly _tag: "Stopped" }

/** What the conversation did since the last update: the turns recorded, the tools called, where it is now. */
export interface CallProgress {
  readonly turns: ReadonlyArray<TranscriptTurn>
  readonly toolCalls: ReadonlyArray<ToolCallTaken>
  readonly nodeId: string
}

/** Caller audio that did not arrive as sent: counted, so a call's log says what its listener missed. */
export interface InboundLoss {
  /** Stretches of missing audio (by the media timestamps) filled with silence, and how long in all. */
  readonly gaps: number
  readonly concealedMs: number
  /** Frames that arrived after their place had been given up (dropped: playing them late would garble speech). */
  readonly lateFrames: number
  /** Frames the buffer now holds back for order, at most (it grows after late frames, shrinks on a clean line). */
  readonly reorderWindow: number
}

/** A message for the provider: text (JSON) or binary. */
export type OutboundMedia = string | Uint8Array

export interface MediaProtocol {
  /** The rate of inbound Audio and of what `audio` takes. */
  readonly sampleRate: 8000 | 16000
  readonly receive: (message: string | Uint8Array) => ReadonlyArray<InboundMedia>
  /** Agent audio (any length; framed into the provider's packet size). */
  readonly audio: (pcm: Int16Array) => ReadonlyArray<OutboundMedia>
  /** A marker the provider echoes (as Played) once the audio sent before it has played. */
  readonly mark: (name: string) => ReadonlyArray<OutboundMedia>
  /** Drops the audio the provider has queued but not yet played (barge-in). */
  readonly clear: () => ReadonlyArray<OutboundMedia>
  /** What the jitter buffer did to the caller's audio so far (protocols whose frames may arrive out of order or not at all). */
  readonly inboundLoss?: () => InboundLoss
  /** Tells the other end how the conversation goes (our browser page only: carriers have no such messages). */
  readonly progress?: (update: CallProgress) => ReadonlyArray<OutboundMedia>
}
