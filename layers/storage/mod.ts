import { Clock, Effect, Layer } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { AppConfig } from "../../services/AppConfig.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { Storage } from "../../services/Storage.ts"
import { StoredObjects } from "../../services/StoredObjects.ts"
import { storageConfig } from "../../src/storage/storageConfig.ts"
import { ensurePrivateDir } from "../privateFiles.ts"
import { makeLocalDiskStorage } from "./localDisk.ts"
import { sweepPartialUploads } from "./partialSweep.ts"
import { StoredObjectsLive } from "./storedObjects.ts"

/** Longer than any upload can run (Node's server ends a request after 5 minutes). */
const ABANDONED_AFTER_SECONDS = 10 * 60

/** What a process that died mid-upload left: partial files on local disk and claims in the database. */
const sweepAbandonedUploads = (root: string | undefined) =>
  Effect.gen(function*() {
    const ledger = yield* StoredObjects
    const claims = yield* ledger.dropStaleClaims(ABANDONED_AFTER_SECONDS)
    const partials = root === undefined
      ? 0
      : yield* Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => Effect.promise(() => sweepPartialUploads(root, ABANDONED_AFTER_SECONDS * 1000, now)))
      )
    if (claims + partials > 0) {
      yield* Effect.logInfo("Removed what abandoned uploads left", { claims, partial_files: partials })
    }
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Sweeping abandoned uploads failed", cause)))

/**
 * Local disk for `file://` STORAGE_URLs (the embedded default), S3 for `s3://`; both account what
 * they store in StoredObjects, provided beside them; S3 once a test write succeeded. Abandoned uploads are swept in the background at start.
 */
export const StorageLive = Layer.scoped(
  Storage,
  Effect.gen(function*() {
    const app = yield* AppConfig
    const config = yield* storageConfig.pipe(Effect.orDie)
    const ledger = yield* StoredObjects
    if (app.storageUrl.startsWith("s3://")) {
      // The AWS SDK is loaded only by a server that stores on S3 (~0.25 s of start-up otherwise).
      const [{ makeS3Storage }, { checkS3Storage }] = yield* Effect.promise(() =>
        Promise.all([import("./s3.ts"), import("./s3Check.ts")])
      )
      yield* checkS3Storage(app.storageUrl, config)
      yield* Effect.forkScoped(sweepAbandonedUploads(undefined))
      return makeS3Storage(app.storageUrl, config, ledger)
    }
    const root = path.resolve(fileURLToPath(app.storageUrl))
    yield* Effect.promise(() => ensurePrivateDir(root))
    yield* Effect.forkScoped(sweepAbandonedUploads(root))
    return makeLocalDiskStorage(root, config, yield* SecretBox, ledger, yield* PublicUrl)
  })
).pipe(Layer.provideMerge(StoredObjectsLive))
