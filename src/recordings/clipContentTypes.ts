import type { ClipKind } from "../audio/clipTranscoding.ts"

/** Media types a clip may be uploaded as, with the kind of decoding each promises. */
const KINDS: Readonly<Record<string, ClipKind>> = {
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/x-mulaw": "mulaw",
  "audio/basic": "mulaw"
}

export const CLIP_CONTENT_TYPES: ReadonlyArray<string> = Object.keys(KINDS)

export const clipKindOf = (mediaType: string): ClipKind | undefined => KINDS[mediaType]

export const extensionOf: Readonly<Record<ClipKind, string>> = { wav: "wav", mp3: "mp3", mulaw: "ulaw" }
