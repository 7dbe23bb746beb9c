import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3ServiceException } from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { Effect } from "effect"
import type { Readable } from "node:stream"
import { NotFound, UpstreamFailed } from "../../src/domain/errors.ts"
import type { StorageConfigShape } from "../../src/storage/storageConfig.ts"
import { mediaTypeOf } from "../../src/storage/uploadKeys.ts"
import { Storage, type UploadRules } from "../../services/Storage.ts"
import { makeS3Client } from "./s3Client.ts"

/** `s3://bucket[/prefix]` → bucket and key prefix (no leading or trailing slash). */
export const parseS3Url = (url: string) => {
  const [bucket, ...rest] = url.replace(/^s3:\/\//, "").split("/")
  const prefix = rest.join("/").replace(/^\/+|\/+$/g, "")
  return { bucket: bucket!, prefix: prefix === "" ? "" : `${prefix}/` }
}

const isMissing = (error: unknown) =>
  error instanceof S3ServiceException && (error.name === "NoSuchKey" || error.name === "NotFound" || error.$metadata.httpStatusCode === 404)

/** Any S3-compatible store (STORAGE_URL=s3://bucket[/prefix]); clients upload to it directly. */
export const makeS3Storage = (storageUrl: string, config: StorageConfigShape) => {
  const { bucket, prefix } = parseS3Url(storageUrl)
  const client = makeS3Client(config)
  const objectKey = (key: string) => `${prefix}${key}`
  const failed = (what: string) => (error: unknown) =>
    isMissing(error)
      ? new NotFound({ resource: "Uploaded file", id: what })
      : new UpstreamFailed({ message: "The object store did not answer as expected" })

  const presignUpload = Effect.fn("Storage.presignUpload")(function* (key: string, rules: UploadRules) {
    const command = new PutObjectCommand({
      Bucket: bucket,
      Key: objectKey(key),
      ContentType: mediaTypeOf(rules.contentType),
      ...(rules.exactBytes === undefined ? {} : { ContentLength: rules.exactBytes })
    })
    // Content-Type (and the length, when known) are signed, so the store refuses anything else.
    const url = yield* Effect.promise(() =>
      getSignedUrl(client, command, {
        expiresIn: rules.expiresInSeconds,
        signableHeaders: new Set(rules.exactBytes === undefined ? ["content-type"] : ["content-type", "content-length"])
      })
    )
    return { url, expiresInSeconds: rules.expiresInSeconds }
  })

  const size = Effect.fn("Storage.size")(function* (key: string) {
    const head = yield* Effect.tryPromise({
      try: () => client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(key) })),
      catch: failed(key)
    })
    return head.ContentLength ?? 0
  })

  const read = Effect.fn("Storage.read")(function* (key: string) {
    return yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(key) }))
          return object.Body as Readable
        },
        catch: failed(key)
      }),
      (body) => Effect.sync(() => body.destroy())
    )
  })

  const write = Effect.fn("Storage.write")(function* (key: string, body: Uint8Array | string, contentType: string) {
    yield* Effect.tryPromise({
      try: () => client.send(new PutObjectCommand({ Bucket: bucket, Key: objectKey(key), Body: body, ContentType: contentType })),
      catch: () => new UpstreamFailed({ message: "Writing to the object store failed" })
    })
  })

  const remove = Effect.fn("Storage.remove")(function* (key: string) {
    yield* Effect.tryPromise({
      try: () => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key) })),
      catch: () => new UpstreamFailed({ message: "Deleting from the object store failed" })
    })
  })

  return Storage.of({
    backend: "s3",
    limits: { maxBytes: config.uploadMaxBytes, urlTtlSeconds: config.uploadUrlTtlSeconds },
    presignUpload,
    receiveUpload: (request) => Effect.fail(new NotFound({ resource: "Local upload", id: request.key })),
    size,
    read,
    write,
    remove
  })
}
