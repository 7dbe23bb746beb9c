import { NodeStream } from "@effect/platform-node"
import { Clock, Effect, Exit, Option, Stream } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import type { SecretBoxShape } from "../../services/SecretBox.ts"
import { type ByteRange, type SignedUploadRequest, Storage, type UploadRules } from "../../services/Storage.ts"
import type { StoredObjectsShape } from "../../services/StoredObjects.ts"
import { Forbidden, NotFound, PayloadTooLarge, UpstreamFailed } from "../../src/domain/errors.ts"
import { acceptsMediaType } from "../../src/storage/csvMediaTypes.ts"
import { ownerOfKey } from "../../src/storage/keyOwner.ts"
import type { StorageConfigShape } from "../../src/storage/storageConfig.ts"
import { quotaExceeded, remainingBytes } from "../../src/storage/storageQuota.ts"
import { mediaTypeOf, uploadSignatureMessage } from "../../src/storage/uploadKeys.ts"
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../privateFiles.ts"

const SIGNING_PURPOSE = "local-upload"

/** Where an upload is written before it is renamed into place; the suffix the start-up sweep looks for. */
export const PARTIAL_SUFFIX = ".part"

/**
 * Files under a directory (STORAGE_URL=file:///…, by default `<data dir>/storage`), owner-only.
 * Upload URLs point at this process (`PUT /api/v1/uploads/local`), signed with the server secret.
 */
export const makeLocalDiskStorage = (
  root: string,
  config: StorageConfigShape,
  secrets: SecretBoxShape,
  ledger: StoredObjectsShape,
  publicUrl: string
) => {
  const fileOf = (key: string) => {
    const file = path.resolve(root, key)
    // Keys are validated upstream; this keeps a crafted key from ever leaving the root.
    if (!file.startsWith(root + path.sep)) throw new Error(`storage key escapes the storage root: ${key}`)
    return file
  }
  const missing = (key: string) => new NotFound({ resource: "Uploaded file", id: key })
  const makeParent = (file: string) => fsp.mkdir(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE })

  const presignUpload = Effect.fn("Storage.presignUpload")(function*(key: string, rules: UploadRules) {
    const expires = Math.floor((yield* Clock.currentTimeMillis) / 1000) + rules.expiresInSeconds
    const maxBytes = rules.exactBytes ?? rules.maxBytes
    const contentType = mediaTypeOf(rules.contentType)
    const signature = secrets.sign(SIGNING_PURPOSE, uploadSignatureMessage(key, expires, maxBytes, contentType))
    const query = new URLSearchParams({
      key,
      expires: String(expires),
      max: String(maxBytes),
      content_type: contentType,
      signature
    })
    return { url: `${publicUrl}/api/v1/uploads/local?${query}`, expiresInSeconds: rules.expiresInSeconds }
  })

  /** Streams the body into `partial`, refusing it once it passes `limit`; answers the size written. */
  const writePartial = (
    partial: string,
    body: Stream.Stream<Uint8Array, unknown>,
    limit: number,
    overLimit: () => PayloadTooLarge
  ) =>
    Effect.acquireUseRelease(
      Effect.promise(() => fsp.open(partial, "wx", PRIVATE_FILE_MODE)),
      (handle) =>
        Stream.runFoldEffect(body.pipe(Stream.orDie), 0, (written, chunk) =>
          written + chunk.length > limit
            ? Effect.fail(overLimit())
            : Effect.promise(() => handle.write(chunk)).pipe(Effect.as(written + chunk.length))),
      (handle) => Effect.promise(() => handle.close())
    )

  const receiveUpload = Effect.fn("Storage.receiveUpload")(function*(
    request: SignedUploadRequest,
    contentType: string,
    declaredBytes: number | undefined,
    body: Stream.Stream<Uint8Array, unknown>
  ) {
    const message = uploadSignatureMessage(request.key, request.expires, request.max, request.contentType)
    if (!secrets.verify(SIGNING_PURPOSE, message, request.signature)) {
      return yield* new Forbidden({ message: "The upload URL's signature is invalid; request a new upload URL" })
    }
    if (request.expires < Math.floor((yield* Clock.currentTimeMillis) / 1000)) {
      return yield* new Forbidden({ message: "The upload URL has expired; request a new upload URL" })
    }
    if (!acceptsMediaType(request.contentType, mediaTypeOf(contentType))) {
      return yield* new Forbidden({ message: `This upload URL only accepts Content-Type: ${request.contentType}` })
    }
    const owner = ownerOfKey(request.key)
    if (owner === undefined) return yield* new Forbidden({ message: "The upload URL names no organization's file" })
    const tooLarge = () =>
      new PayloadTooLarge({ message: `The file is larger than this upload URL allows (${request.max} bytes)` })
    if (declaredBytes !== undefined && declaredBytes > request.max) return yield* tooLarge()
    const use = yield* ledger.use(owner)
    if (declaredBytes !== undefined) yield* ledger.ensureRoom(owner, declaredBytes)
    const overQuota = () => new PayloadTooLarge({ message: quotaExceeded(use) })
    const room = remainingBytes(use)

    yield* ledger.claimUpload(owner, request.key)
    const target = fileOf(request.key)
    const partial = `${target}.${crypto.randomUUID()}${PARTIAL_SUFFIX}`
    return yield* Effect.gen(function*() {
      yield* Effect.promise(() => makeParent(target))
      const size = yield* writePartial(
        partial,
        body,
        Math.min(request.max, room),
        () => (room < request.max ? overQuota() : tooLarge())
      )
      // Renamed into place only once counted: a reader never sees half a file, nor one over the quota.
      yield* ledger.completeUpload(owner, request.key, size, Effect.promise(() => fsp.rename(partial, target)))
      return { size }
    }).pipe(
      // Whatever ends the upload early (a refusal, a client that hangs up, a stopping server), the
      // partial file goes and the URL may be used again until it expires.
      Effect.onExit((exit) =>
        Exit.isSuccess(exit)
          ? Effect.void
          : Effect.promise(() => fsp.rm(partial, { force: true })).pipe(
            Effect.zipRight(ledger.releaseUpload(request.key))
          )
      )
    )
  })

  const size = Effect.fn("Storage.size")(function*(key: string) {
    const stat = yield* Effect.tryPromise({ try: () => fsp.stat(fileOf(key)), catch: () => missing(key) })
    return stat.size
  })

  const read = Effect.fn("Storage.read")(function*(key: string) {
    const file = fileOf(key)
    yield* Effect.tryPromise({ try: () => fsp.access(file, fs.constants.R_OK), catch: () => missing(key) })
    return yield* Effect.acquireRelease(
      Effect.sync(() => fs.createReadStream(file, { highWaterMark: 256 * 1024 })),
      (stream) => Effect.sync(() => stream.destroy())
    )
  })

  const download = (key: string, range?: ByteRange) =>
    NodeStream.fromReadable(
      () =>
        fs.createReadStream(fileOf(key), {
          highWaterMark: 256 * 1024,
          ...(range ? { start: range.start, end: range.end } : {})
        }),
      () => new UpstreamFailed({ message: "Reading from local storage failed" })
    )

  const write = Effect.fn("Storage.write")(function*(key: string, body: Uint8Array | string, _contentType: string) {
    const file = fileOf(key)
    yield* Effect.tryPromise({
      try: async () => {
        await makeParent(file)
        await fsp.writeFile(file, body, { mode: PRIVATE_FILE_MODE })
      },
      catch: () => new UpstreamFailed({ message: "Writing to local storage failed" })
    })
    yield* ledger.record(key, typeof body === "string" ? Buffer.byteLength(body) : body.byteLength)
  })

  const remove = Effect.fn("Storage.remove")(function*(key: string) {
    yield* Effect.tryPromise({
      try: () => fsp.rm(fileOf(key), { force: true }),
      catch: () => new UpstreamFailed({ message: "Deleting from local storage failed" })
    })
    yield* ledger.forget(key)
  })

  return Storage.of({
    backend: "local",
    limits: { maxBytes: config.uploadMaxBytes, urlTtlSeconds: config.uploadUrlTtlSeconds },
    presignUpload,
    receiveUpload,
    size,
    read,
    download,
    presignDownload: () => Effect.succeed(Option.none()),
    write,
    remove
  })
}
