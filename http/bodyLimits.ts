const KiB = 1024
const MiB = 1024 * KiB

/**
 * How a route takes its request body. `Decoded`: JSON (or form fields) that the endpoint's schema
 * decodes. `Raw`: a carrier's callback, read whole and parsed by its carrier's adapter whatever
 * type it declares. Both are read up to `maxBytes` before anything else happens. `Streamed`: the
 * handler writes the body away as it arrives, under a cap of its own that it enforces. A route
 * added with a streamed body must be named here, or its body is read (and used up) up front.
 */
type BodyLimit =
  | { readonly _tag: "Decoded"; readonly maxBytes: number }
  | { readonly _tag: "Raw"; readonly maxBytes: number }
  | { readonly _tag: "Streamed" }

/** JSON API requests: an agent definition with long prompts fits many times over. */
export const JSON_BODY_MAX_BYTES = 1 * MiB
/** Login and signup: an email, a password, a name. */
export const AUTH_BODY_MAX_BYTES = 16 * KiB
/** A carrier's call or status callback: form fields or JSON of a few hundred bytes. */
export const CARRIER_CALLBACK_MAX_BYTES = 64 * KiB

/**
 * One message on a call's media WebSocket: 20 ms of audio (a few hundred bytes of JSON and
 * base64, or 640 bytes of PCM) or a start/stop event with a handful of parameters.
 */
export const MEDIA_MESSAGE_MAX_BYTES = 64 * KiB

const CARRIER_CALLBACK = /^\/api\/v1\/telephony\/[^/]+\/(status|answer|inbound)\//

/** The body limit of the route at `path`. */
export const bodyLimitOf = (path: string): BodyLimit => {
  // Signed upload URLs carry their own size cap; the file is written to storage as it arrives.
  if (path.startsWith("/api/v1/uploads/")) return { _tag: "Streamed" }
  if (path.startsWith("/api/v1/auth/")) return { _tag: "Decoded", maxBytes: AUTH_BODY_MAX_BYTES }
  if (CARRIER_CALLBACK.test(path)) return { _tag: "Raw", maxBytes: CARRIER_CALLBACK_MAX_BYTES }
  return { _tag: "Decoded", maxBytes: JSON_BODY_MAX_BYTES }
}

/** `1 MiB`, `16 KiB`: how a limit reads in a message. */
export const sizeText = (bytes: number) =>
  bytes >= MiB && bytes % MiB === 0
    ? `${bytes / MiB} MiB`
    : bytes >= KiB && bytes % KiB === 0
    ? `${bytes / KiB} KiB`
    : `${bytes} bytes`
