import * as crypto from "node:crypto"
import type { ClipKind } from "../audio/clipTranscoding.ts"
import { extensionOf } from "./clipContentTypes.ts"

/**
 * Uploaded clips live under their organization's prefix, like contact CSVs, so a key names its
 * owner and registering another organization's upload is refused without a lookup.
 */
const UPLOAD_KEY = /^organizations\/(\d+)\/recordings\/uploads\/[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.(wav|mp3|ulaw)$/

const KIND_OF_EXTENSION: Readonly<Record<string, ClipKind>> = { wav: "wav", mp3: "mp3", ulaw: "mulaw" }

/** The organization and decoding of an upload key this service handed out, or undefined. */
export const parseUploadKey = (
  key: string
): { readonly organizationId: number; readonly kind: ClipKind } | undefined => {
  const match = UPLOAD_KEY.exec(key)
  return match ? { organizationId: Number(match[1]), kind: KIND_OF_EXTENSION[match[2]!]! } : undefined
}

/** A fresh upload key; the client's file name is kept (sanitised) to make keys recognisable. */
export const newUploadKey = (organizationId: number, kind: ClipKind, fileName?: string) => {
  const stem = (fileName ?? "")
    .replace(/\.[A-Za-z0-9]{1,5}$/, "")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 80)
  return `organizations/${organizationId}/recordings/uploads/${crypto.randomUUID()}${stem ? `_${stem}` : ""}.${
    extensionOf[kind]
  }`
}

/** Where the converted forms of one registered clip are kept. */
export const playbackKeys = (organizationId: number) => {
  const folder = `organizations/${organizationId}/recordings/${crypto.randomUUID()}`
  return { ulaw8k: `${folder}/audio-8k.ulaw`, pcm16k: `${folder}/audio-16k.pcm` }
}
