import { Context, type Effect, type Scope, type Stream } from "effect"
import type { Readable } from "node:stream"
import type { Forbidden, NotFound, PayloadTooLarge, UpstreamFailed } from "../src/domain/errors.ts"

export interface UploadGrant {
  /** Where the client PUTs the file, with no service key: the URL itself authorizes it. */
  readonly url: string
  readonly expiresInSeconds: number
}

export interface UploadRules {
  readonly contentType: string
  readonly maxBytes: number
  readonly expiresInSeconds: number
  /** When the client announced its size, the URL admits exactly that many bytes (S3 signs it). */
  readonly exactBytes?: number | undefined
  /** Where clients reach this process (the local backend's upload URLs point here). */
  readonly publicUrl: string
}

/** The query string of a URL this process handed out for a local upload. */
export interface SignedUploadRequest {
  readonly key: string
  readonly expires: number
  readonly max: number
  readonly contentType: string
  readonly signature: string
}

/**
 * Object storage for uploaded files (contacts CSVs), keyed by organization-prefixed keys: the
 * local disk under the data dir (embedded default) or any S3-compatible store.
 */
export interface StorageShape {
  readonly backend: "local" | "s3"
  /** The size cap of an upload and the lifetime of an upload URL (UPLOAD_MAX_BYTES, UPLOAD_URL_TTL_SECONDS). */
  readonly limits: { readonly maxBytes: number; readonly urlTtlSeconds: number }
  readonly presignUpload: (key: string, rules: UploadRules) => Effect.Effect<UploadGrant>
  /**
   * Stores the body of a PUT to a URL from `presignUpload` on the local backend, after checking
   * its signature, expiry, content type and size. The S3 backend answers NotFound: its clients
   * upload to S3 directly.
   */
  readonly receiveUpload: (
    request: SignedUploadRequest,
    contentType: string,
    declaredBytes: number | undefined,
    body: Stream.Stream<Uint8Array, unknown>
  ) => Effect.Effect<{ readonly size: number }, Forbidden | PayloadTooLarge | NotFound>
  readonly size: (key: string) => Effect.Effect<number, NotFound | UpstreamFailed>
  /** The object's bytes as a stream, closed when the scope closes. */
  readonly read: (key: string) => Effect.Effect<Readable, NotFound | UpstreamFailed, Scope.Scope>
  readonly write: (key: string, body: Uint8Array | string, contentType: string) => Effect.Effect<void, UpstreamFailed>
  /** Deletes the object; a key with no object is not an error. */
  readonly remove: (key: string) => Effect.Effect<void, UpstreamFailed>
}

export class Storage extends Context.Tag("talkgraph/Storage")<Storage, StorageShape>() {}
