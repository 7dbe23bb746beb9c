import { PutObjectCommand, S3ServiceException } from "@aws-sdk/client-s3"
import { Effect, Option, Schema } from "effect"
import type { StorageConfigShape } from "../../src/storage/storageConfig.ts"
import { parseS3Url } from "./s3.ts"
import { makeS3Client } from "./s3Client.ts"

/** The configured S3 storage cannot be written to; the message says why. */
export class StorageUnavailable extends Schema.TaggedError<StorageUnavailable>()("StorageUnavailable", {
  message: Schema.String
}) {}

/** Written under the prefix at every start, then left (the next start overwrites it). */
const CHECK_KEY = ".talkgraph-storage-check"
const CHECK_TIMEOUT_SECONDS = 10

const codeOf = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined

/** What the operator should read when the test write to `where` fails with `error`. */
export const describeS3Failure = (
  error: unknown,
  where: { readonly store: string; readonly location: string }
): string => {
  const { store, location } = where
  switch (codeOf(error)) {
    case "ECONNREFUSED":
      return `S3 storage at ${store} refused the connection: is it running? (S3_ENDPOINT)`
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `S3 storage at ${store} is unknown: its host does not resolve (S3_ENDPOINT)`
    case "ECONNRESET":
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `S3 storage at ${store} cannot be reached (${codeOf(error)})`
  }
  if (error instanceof S3ServiceException) {
    switch (error.name) {
      case "NoSuchBucket":
        return `the bucket of ${location} does not exist at ${store}: create it or fix STORAGE_URL`
      case "InvalidAccessKeyId":
        return `S3 storage at ${store} does not know the access key in AWS_ACCESS_KEY_ID (InvalidAccessKeyId)`
      case "SignatureDoesNotMatch":
        return `S3 storage at ${store} refused AWS_SECRET_ACCESS_KEY for that access key (SignatureDoesNotMatch)`
      case "AccessDenied":
        return `the S3 credentials may not write to ${location} (AccessDenied)`
      case "PermanentRedirect":
      case "AuthorizationHeaderMalformed":
      case "IllegalLocationConstraintException":
        return `the bucket of ${location} is in another region than S3_REGION (${error.name})`
    }
    return `S3 storage at ${store} refused a test write to ${location}: ${error.name}`
  }
  if (error instanceof Error && error.name === "CredentialsProviderError") {
    return "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or give the host an AWS role)"
  }
  return `S3 storage at ${store} failed a test write to ${location}: ${
    error instanceof Error ? error.message : String(error)
  }`
}

/**
 * Writes a small object under the prefix, so that storage which does not answer, a bucket that
 * does not exist or refused credentials stop the start with one clear line instead of failing
 * the first upload. A write, not HeadBucket: it needs only the permission talkgraph uses anyway
 * (HeadBucket needs s3:ListBucket), and unlike a HEAD its error body names the refusal.
 */
export const checkS3Storage = Effect.fn("Storage.check")(function*(storageUrl: string, config: StorageConfigShape) {
  const { bucket, prefix } = parseS3Url(storageUrl)
  const where = {
    store: Option.getOrElse(config.s3Endpoint, () => `AWS S3 (${config.s3Region})`),
    location: `s3://${bucket}/${prefix}`
  }
  yield* Effect.acquireUseRelease(
    Effect.sync(() => makeS3Client(config)),
    (client) =>
      Effect.tryPromise({
        try: (signal) =>
          client.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: `${prefix}${CHECK_KEY}`,
              Body: "talkgraph checks at start that it can write here\n",
              ContentType: "text/plain"
            }),
            { abortSignal: signal }
          ),
        catch: (error) => new StorageUnavailable({ message: describeS3Failure(error, where) })
      }).pipe(
        Effect.timeoutFail({
          duration: `${CHECK_TIMEOUT_SECONDS} seconds`,
          onTimeout: () =>
            new StorageUnavailable({
              message: `S3 storage at ${where.store} did not answer within ${CHECK_TIMEOUT_SECONDS} s`
            })
        })
      ),
    (client) => Effect.sync(() => client.destroy())
  )
})
