import { Effect, Layer } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { AppConfig } from "../../src/config.ts"
import { storageConfig } from "../../src/storage/storageConfig.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { Storage } from "../../services/Storage.ts"
import { makeLocalDiskStorage } from "./localDisk.ts"
import { makeS3Storage } from "./s3.ts"
import { checkS3Storage } from "./s3Check.ts"

/** Local disk for `file://` STORAGE_URLs (the embedded default), S3 for `s3://` once a test write succeeded. */
export const StorageLive = Layer.effect(
  Storage,
  Effect.gen(function* () {
    const app = yield* AppConfig
    const config = yield* storageConfig.pipe(Effect.orDie)
    if (app.storageUrl.startsWith("s3://")) {
      yield* checkS3Storage(app.storageUrl, config)
      return makeS3Storage(app.storageUrl, config)
    }
    return makeLocalDiskStorage(path.resolve(fileURLToPath(app.storageUrl)), config, yield* SecretBox)
  })
)
