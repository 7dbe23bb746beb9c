import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3ServiceException
} from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { NodeStream } from "@effect/platform-node"
import { Effect, Option, Stream } from "effect"
import type { Readable } from "node:stream"
import { type ByteRange, type DownloadRules, Storage, type UploadRules } from "../../services/Storage.ts"
import type { StoredObjectsShape } from "../../services/StoredObjects.ts"
import { NotFound, UpstreamFailed } from "../../src/domain/errors.ts"
import { isCsvMediaType } from "../../src/storage/csvMediaTypes.ts"
import type { StorageConfigShape } from "../../src/storage/storageConfig.ts"
import { mediaTypeOf } from "../../src/storage/uploadKeys.ts"
import { makeS3Client } from "./s3Client.ts"

/** `s3://bucket[/prefix]` → bucket and key prefix (no leading or trailing slash). */
export const parseS3Url = (url: string) => {
  const [bucket, ...rest] = url.replace(/^s3:\/\//, "").split("/")
  const prefix = rest.join("/").replace(/^\/+|\/+$/g, "")
  return { bucket: bucket!, prefix: prefix === "" ? "" : `${prefix}/` }
}

const isMissing = (error: unknown) =>
  error instanceof S3ServiceException &&
  (error.name === "NoSuchKey" || error.name === "NotFound" || error.$metadata.httpStatusCode === 404)

/** Any S3-compatible store (STORAGE_URL=s3://bucket[/prefix]); clients upload to it directly. */
export const makeS3Storage = (storageUrl: string, config: StorageConfigShape, ledger: StoredObjectsShape) => {
  const { bucket, prefix } = parseS3Url(storageUrl)
  const client = makeS3Client(config)
  const objectKey = (key: string) => `${prefix}${key}`
  const failed = (what: string) => (error: unknown) =>
    isMissing(error)
      ? new NotFound({ resource: "Uploaded file", id: what })
      : new UpstreamFailed({ message: "The object store did not answer as expected" })

  const presignUpload = Effect.fn("Storage.presignUpload")(function*(key: string, rules: UploadRules) {
    // A clip's Content-Type is signed, so the store refuses anything else. A CSV's is not: browsers
    // send whatever type the system gives `.csv` (often application/vnd.ms-excel), and the file is
    // parsed as CSV whatever it was sent as. The length is signed whenever it was announced.
    const contentType = mediaTypeOf(rules.contentType)
    const signsType = !isCsvMediaType(contentType)
    const command = new PutObjectCommand({
      Bucket: bucket,
      Key: objectKey(key),
      ...(signsType ? { ContentType: contentType } : {}),
      ...(rules.exactBytes === undefined ? {} : { ContentLength: rules.exactBytes })
    })
    const signed = [
      ...(signsType ? ["content-type"] : []),
      ...(rules.exactBytes === undefined ? [] : ["content-length"])
    ]
    const url = yield* Effect.promise(() =>
      getSignedUrl(client, command, { expiresIn: rules.expiresInSeconds, signableHeaders: new Set(signed) })
    )
    return { url, expiresInSeconds: rules.expiresInSeconds }
  })

  const size = Effect.fn("Storage.size")(function*(key: string) {
    const head = yield* Effect.tryPromise({
      try: () => client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(key) })),
      catch: failed(key)
    })
    const bytes = head.ContentLength ?? 0
    // Clients upload to the store directly; an upload is counted once the server first sees it.
    yield* ledger.record(key, bytes)
    return bytes
  })

  const read = Effect.fn("Storage.read")(function*(key: string) {
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

  const download = (key: string, range?: ByteRange) =>
    Stream.unwrap(Effect.map(
      Effect.tryPromise({
        try: () =>
          client.send(
            new GetObjectCommand({
              Bucket: bucket,
              Key: objectKey(key),
              ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {})
            })
          ),
        catch: () => new UpstreamFailed({ message: "The object store did not answer as expected" })
      }),
      (object) =>
        NodeStream.fromReadable(() => object.Body as Readable, () =>
          new UpstreamFailed({ message: "Reading from the object store failed" }))
    ))

  const presignDownload = Effect.fn("Storage.presignDownload")(function*(key: string, rules: DownloadRules) {
    // The store answers with the type and file name the URL asks for (both are signed with it).
    const command = new GetObjectCommand({
      Bucket: bucket,
      Key: objectKey(key),
      ResponseContentType: rules.contentType,
      ResponseContentDisposition: `attachment; filename="${rules.fileName}"`
    })
    return Option.some(
      yield* Effect.promise(() => getSignedUrl(client, command, { expiresIn: rules.expiresInSeconds }))
    )
  })

  const write = Effect.fn("Storage.write")(function*(key: string, body: Uint8Array | string, contentType: string) {
    yield* Effect.tryPromise({
      try: () =>
        client.send(
          new PutObjectCommand({ Bucket: bucket, Key: objectKey(key), Body: body, ContentType: contentType })
        ),
      catch: () => new UpstreamFailed({ message: "Writing to the object store failed" })
    })
    yield* ledger.record(key, typeof body === "string" ? Buffer.byteLength(body) : body.byteLength)
  })

  const remove = Effect.fn("Storage.remove")(function*(key: string) {
    yield* Effect.tryPromise({
      try: () => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key) })),
      catch: () => new UpstreamFailed({ message: "Deleting from the object store failed" })
    })
    yield* ledger.forget(key)
  })

  return Storage.of({
    backend: "s3",
    limits: { maxBytes: config.uploadMaxBytes, urlTtlSeconds: config.uploadUrlTtlSeconds },
    presignUpload,
    receiveUpload: (request) => Effect.fail(new NotFound({ resource: "Local upload", id: request.key })),
    size,
    read,
    download,
    presignDownload,
    write,
    remove
  })
}
