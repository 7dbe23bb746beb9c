import { Context, type Effect, type Option, type Scope, type Stream } from "effect"
import type { Readable } from "node:stream"
import type { Forbidden, NotFound, PayloadTooLarge, UpstreamFailed } from "../src/domain/errors.ts"

export interface UploadGrant {
  /** Where the client PUTs the file, with no service key: the URL itself authorizes it. */
  readonly url: string
  readonly expiresInSeconds: number
}

export interface UploadRules {
  /** The media type the URL is for; a CSV URL takes any of the types `.csv` files arrive with. */
  readonly contentType: string
  readonly maxBytes: number
  readonly expiresInSeconds: number
  /** When the client announced its size, the URL admits exactly that many bytes (S3 signs it). */
  readonly exactBytes?: number | undefined
}

/** How a browser should take a download: its media type and the name to save it under. */
export interface DownloadRules {
  readonly contentType: string
  readonly fileName: string
  readonly expiresInSeconds: number
}

/** An inclusive byte range of an object. */
export interface ByteRange {
  readonly start: number
  readonly end: number
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
 * Object storage keyed by organization-prefixed keys (`ownerOfKey`): uploads (contacts CSVs,
 * clips), converted clips and call recordings, on the local disk under the data dir (embedded
 * default) or any S3-compatible store. Every object stored or removed is accounted in
 * `StoredObjects`, which each organization's storage quota is checked against.
 */
export interface StorageShape {
  readonly backend: "local" | "s3"
  /** The size cap of an upload and the lifetime of an upload URL (UPLOAD_MAX_BYTES, UPLOAD_URL_TTL_SECONDS). */
  readonly limits: { readonly maxBytes: number; readonly urlTtlSeconds: number }
  readonly presignUpload: (key: string, rules: UploadRules) => Effect.Effect<UploadGrant>
  /**
   * Stores the body of a PUT to a URL from `presignUpload` on the local backend, after checking
   * its signature, expiry, content type, size and the organization's quota; a URL stores one
   * file (a replay is refused) and a failed or aborted upload leaves nothing behind. The S3
   * backend answers NotFound: its clients upload to S3 directly.
   */
  readonly receiveUpload: (
    request: SignedUploadRequest,
    contentType: string,
    declaredBytes: number | undefined,
    body: Stream.Stream<Uint8Array, unknown>
  ) => Effect.Effect<{ readonly size: number }, Forbidden | PayloadTooLarge | NotFound>
  /** The object's size; on S3 this is also when a direct upload is first counted. */
  readonly size: (key: string) => Effect.Effect<number, NotFound | UpstreamFailed>
  /** The object's bytes as a stream, closed when the scope closes. */
  readonly read: (key: string) => Effect.Effect<Readable, NotFound | UpstreamFailed, Scope.Scope>
  /** The object's bytes, or a range of them, read only when the stream runs. */
  readonly download: (key: string, range?: ByteRange) => Stream.Stream<Uint8Array, UpstreamFailed>
  /** A short-lived URL the client fetches the object from itself (S3), or none (local: served by this process). */
  readonly presignDownload: (key: string, rules: DownloadRules) => Effect.Effect<Option.Option<string>>
  readonly write: (key: string, body: Uint8Array | string, contentType: string) => Effect.Effect<void, UpstreamFailed>
  /** Deletes the object; a key with no object is not an error. */
  readonly remove: (key: string) => Effect.Effect<void, UpstreamFailed>
}

export class Storage extends Context.Tag("talkgraph/Storage")<Storage, StorageShape>() {}
