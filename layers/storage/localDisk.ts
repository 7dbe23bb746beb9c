import { Effect, Stream } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Forbidden, NotFound, PayloadTooLarge, UpstreamFailed } from "../../src/domain/errors.ts"
import type { StorageConfigShape } from "../../src/storage/storageConfig.ts"
import { mediaTypeOf, uploadSignatureMessage } from "../../src/storage/uploadKeys.ts"
import type { SecretBoxShape } from "../../services/SecretBox.ts"
import { type SignedUploadRequest, Storage, type UploadRules } from "../../services/Storage.ts"

const SIGNING_PURPOSE = "local-upload"

/**
 * Files under a directory (STORAGE_URL=file:///…, by default `<data dir>/storage`). Upload URLs
 * point at this process (`PUT /api/v1/uploads/local`), signed with the server secret.
 */
export const makeLocalDiskStorage = (root: string, config: StorageConfigShape, secrets: SecretBoxShape) => {
  const fileOf = (key: string) => {
    const file = path.resolve(root, key)
    // Keys are validated upstream; this keeps a crafted key from ever leaving the root.
    if (!file.startsWith(root + path.sep)) throw new Error(`storage key escapes the storage root: ${key}`)
    return file
  }
  const missing = (key: string) => new NotFound({ resource: "Uploaded file", id: key })

  const presignUpload = Effect.fn("Storage.presignUpload")(function* (key: string, rules: UploadRules) {
    const expires = Math.floor(Date.now() / 1000) + rules.expiresInSeconds
    const maxBytes = rules.exactBytes ?? rules.maxBytes
    const contentType = mediaTypeOf(rules.contentType)
    const signature = secrets.sign(SIGNING_PURPOSE, uploadSignatureMessage(key, expires, maxBytes, contentType))
    const query = new URLSearchParams({ key, expires: String(expires), max: String(maxBytes), content_type: contentType, signature })
    return { url: `${rules.publicUrl}/api/v1/uploads/local?${query}`, expiresInSeconds: rules.expiresInSeconds }
  })

  const receiveUpload = Effect.fn("Storage.receiveUpload")(function* (
    request: SignedUploadRequest,
    contentType: string,
    declaredBytes: number | undefined,
    body: Stream.Stream<Uint8Array, unknown>
  ) {
    const message = uploadSignatureMessage(request.key, request.expires, request.max, request.contentType)
    if (!secrets.verify(SIGNING_PURPOSE, message, request.signature)) {
      return yield* new Forbidden({ message: "The upload URL's signature is invalid; request a new upload URL" })
    }
    if (request.expires < Math.floor(Date.now() / 1000)) {
      return yield* new Forbidden({ message: "The upload URL has expired; request a new upload URL" })
    }
    if (mediaTypeOf(contentType) !== request.contentType) {
      return yield* new Forbidden({ message: `This upload URL only accepts Content-Type: ${request.contentType}` })
    }
    const tooLarge = new PayloadTooLarge({ message: `The file is larger than this upload URL allows (${request.max} bytes)` })
    if (declaredBytes !== undefined && declaredBytes > request.max) return yield* tooLarge
    const target = fileOf(request.key)
    const partial = `${target}.${crypto.randomUUID()}.part`
    yield* Effect.promise(() => fsp.mkdir(path.dirname(target), { recursive: true }))
    // Written beside the target and renamed into place: a reader never sees half a file.
    const size = yield* Effect.acquireUseRelease(
      Effect.promise(() => fsp.open(partial, "w")),
      (handle) =>
        Stream.runFoldEffect(body.pipe(Stream.orDie), 0, (written, chunk) =>
          written + chunk.length > request.max
            ? Effect.fail(tooLarge)
            : Effect.promise(() => handle.write(chunk)).pipe(Effect.as(written + chunk.length))),
      (handle) => Effect.promise(() => handle.close())
    ).pipe(Effect.tapErrorCause(() => Effect.promise(() => fsp.rm(partial, { force: true }))))
    yield* Effect.promise(() => fsp.rename(partial, target))
    return { size }
  })

  const size = Effect.fn("Storage.size")(function* (key: string) {
    const stat = yield* Effect.tryPromise({ try: () => fsp.stat(fileOf(key)), catch: () => missing(key) })
    return stat.size
  })

  const read = Effect.fn("Storage.read")(function* (key: string) {
    const file = fileOf(key)
    yield* Effect.tryPromise({ try: () => fsp.access(file, fs.constants.R_OK), catch: () => missing(key) })
    return yield* Effect.acquireRelease(
      Effect.sync(() => fs.createReadStream(file, { highWaterMark: 256 * 1024 })),
      (stream) => Effect.sync(() => stream.destroy())
    )
  })

  const write = Effect.fn("Storage.write")(function* (key: string, body: Uint8Array | string, _contentType: string) {
    const file = fileOf(key)
    yield* Effect.tryPromise({
      try: async () => {
        await fsp.mkdir(path.dirname(file), { recursive: true })
        await fsp.writeFile(file, body)
      },
      catch: () => new UpstreamFailed({ message: "Writing to local storage failed" })
    })
  })

  const remove = Effect.fn("Storage.remove")(function* (key: string) {
    yield* Effect.tryPromise({
      try: () => fsp.rm(fileOf(key), { force: true }),
      catch: () => new UpstreamFailed({ message: "Deleting from local storage failed" })
    })
  })

  return Storage.of({
    backend: "local",
    limits: { maxBytes: config.uploadMaxBytes, urlTtlSeconds: config.uploadUrlTtlSeconds },
    presignUpload,
    receiveUpload,
    size,
    read,
    write,
    remove
  })
}
