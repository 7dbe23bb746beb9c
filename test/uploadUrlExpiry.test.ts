import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Stream, TestClock } from "effect"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { makeSecretBox } from "../layers/secrets/secretBox.ts"
import { makeLocalDiskStorage } from "../layers/storage/localDisk.ts"
import type { StoredObjectsShape } from "../services/StoredObjects.ts"
import type { StorageConfigShape } from "../src/storage/storageConfig.ts"

const config: StorageConfigShape = {
  s3Endpoint: Option.none(),
  s3Region: "us-east-1",
  s3ForcePathStyle: false,
  accessKeyId: Option.none(),
  secretAccessKey: Option.none(),
  uploadMaxBytes: 1024,
  uploadUrlTtlSeconds: 900,
  storageQuotaBytes: 0
}

/** A ledger with room for everything: what is under test is the URL's lifetime, not the quota. */
const ledger: StoredObjectsShape = {
  use: () => Effect.succeed({ quotaBytes: 0, usedBytes: 0 }),
  ensureRoom: () => Effect.void,
  claimUpload: () => Effect.void,
  completeUpload: <E>(_organizationId: number, _key: string, _bytes: number, place: Effect.Effect<void, E>) => place,
  releaseUpload: () => Effect.void,
  record: () => Effect.void,
  forget: () => Effect.void,
  dropStaleClaims: () => Effect.succeed(0)
}

const TTL_SECONDS = 900

describe("an upload URL's lifetime, on the service's clock", () => {
  it.scoped("is accepted until it expires and refused after, however late the wall clock says it is", () =>
    Effect.gen(function*() {
      const root = yield* Effect.acquireRelease(
        Effect.promise(() => fsp.mkdtemp(path.join(os.tmpdir(), "talkgraph-upload-"))),
        (dir) => Effect.promise(() => fsp.rm(dir, { recursive: true, force: true }))
      )
      const storage = makeLocalDiskStorage(
        root,
        config,
        makeSecretBox("test-secret-key-test-secret-key-0123456789"),
        ledger,
        "http://talkgraph.test"
      )
      const upload = (key: string) =>
        Effect.gen(function*() {
          const { url } = yield* storage.presignUpload(key, {
            contentType: "text/csv",
            maxBytes: 1024,
            expiresInSeconds: TTL_SECONDS
          })
          const query = new URL(url).searchParams
          return (body: string) =>
            storage.receiveUpload(
              {
                key: query.get("key")!,
                expires: Number(query.get("expires")),
                max: Number(query.get("max")),
                contentType: query.get("content_type")!,
                signature: query.get("signature")!
              },
              "text/csv",
              body.length,
              Stream.make(new TextEncoder().encode(body))
            )
        })

      const inTime = yield* upload("organizations/1/contacts/in-time.csv")
      yield* TestClock.adjust(`${TTL_SECONDS - 1} seconds`)
      expect(yield* inTime("phone_number\n+15550000001\n")).toEqual({ size: 26 })

      const late = yield* upload("organizations/1/contacts/late.csv")
      yield* TestClock.adjust(`${TTL_SECONDS + 1} seconds`)
      const refusal = yield* late("phone_number\n+15550000001\n").pipe(Effect.flip)
      expect(refusal).toMatchObject({ _tag: "Forbidden", message: expect.stringMatching(/has expired/) })
    }))
})
