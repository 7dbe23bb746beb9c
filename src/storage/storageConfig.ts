import { Config, Effect, Option, Redacted } from "effect"

/** Upload and S3 settings (STORAGE_URL itself is read by AppConfig). */
export interface StorageConfigShape {
  readonly s3Endpoint: Option.Option<string>
  readonly s3Region: string
  readonly s3ForcePathStyle: boolean
  readonly accessKeyId: Option.Option<Redacted.Redacted>
  readonly secretAccessKey: Option.Option<Redacted.Redacted>
  /** The largest contacts CSV accepted, in bytes (default 100 MiB: about 1.5 million rows). */
  readonly uploadMaxBytes: number
  /** How long an upload URL stays valid (default 15 minutes). */
  readonly uploadUrlTtlSeconds: number
  /** What one organization may keep in storage, in bytes (default 10 GiB; 0: no quota). */
  readonly storageQuotaBytes: number
}

export const storageConfig = Effect.gen(function*() {
  const s3Endpoint = yield* Config.string("S3_ENDPOINT").pipe(Config.option)
  const shape: StorageConfigShape = {
    s3Endpoint,
    s3Region: yield* Config.string("S3_REGION").pipe(Config.withDefault("us-east-1")),
    // Most S3-compatible stores (MinIO, s3rver, Ceph) address buckets by path, AWS by host name.
    s3ForcePathStyle: yield* Config.boolean("S3_FORCE_PATH_STYLE").pipe(Config.withDefault(Option.isSome(s3Endpoint))),
    accessKeyId: yield* Config.redacted("AWS_ACCESS_KEY_ID").pipe(Config.option),
    secretAccessKey: yield* Config.redacted("AWS_SECRET_ACCESS_KEY").pipe(Config.option),
    uploadMaxBytes: yield* Config.integer("UPLOAD_MAX_BYTES").pipe(
      Config.validate({
        message: "UPLOAD_MAX_BYTES must be between 1 and 10737418240",
        validation: (n) => n >= 1 && n <= 10 * 1024 ** 3
      }),
      Config.withDefault(100 * 1024 * 1024)
    ),
    uploadUrlTtlSeconds: yield* Config.integer("UPLOAD_URL_TTL_SECONDS").pipe(
      Config.validate({
        message: "UPLOAD_URL_TTL_SECONDS must be between 1 and 604800",
        validation: (n) => n >= 1 && n <= 604_800
      }),
      Config.withDefault(900)
    ),
    storageQuotaBytes: yield* Config.integer("STORAGE_QUOTA_BYTES").pipe(
      Config.validate({
        message: "STORAGE_QUOTA_BYTES must be 0 (no quota) or a number of bytes",
        validation: (n) => n >= 0 && Number.isSafeInteger(n)
      }),
      Config.withDefault(10 * 1024 ** 3)
    )
  }
  return shape
})

export const credentialsOf = (config: StorageConfigShape) =>
  Option.isSome(config.accessKeyId) && Option.isSome(config.secretAccessKey)
    ? {
      accessKeyId: Redacted.value(config.accessKeyId.value),
      secretAccessKey: Redacted.value(config.secretAccessKey.value)
    }
    : undefined
