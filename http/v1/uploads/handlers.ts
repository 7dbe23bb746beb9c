import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Storage } from "../../../services/Storage.ts"
import { StoredObjects } from "../../../services/StoredObjects.ts"
import { uploadTerms } from "../../../src/storage/uploadRequest.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

export const UploadsHandlers = HttpApiBuilder.group(Api, "uploads", (handlers) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    const storedObjects = yield* StoredObjects
    return handlers.handle("presign", ({ payload }) =>
      Effect.gen(function*() {
        const principal = yield* requireScope("campaigns:write")
        const terms = yield* uploadTerms(principal.organizationId, payload, storage.limits.maxBytes)
        yield* storedObjects.ensureRoom(principal.organizationId, payload?.file_size ?? 0)
        const grant = yield* storage.presignUpload(terms.key, {
          contentType: terms.contentType,
          maxBytes: storage.limits.maxBytes,
          expiresInSeconds: storage.limits.urlTtlSeconds,
          exactBytes: terms.exactBytes
        })
        return {
          upload_url: grant.url,
          s3_key: terms.key,
          file_key: terms.key,
          expires_in: grant.expiresInSeconds,
          max_size_bytes: terms.maxBytes,
          content_type: terms.contentType
        }
      }))
  }))

export const LocalUploadsHandlers = HttpApiBuilder.group(Api, "localUploads", (handlers) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    return handlers.handleRaw("receive", ({ request, urlParams }) =>
      Effect.gen(function*() {
        const declared = request.headers["content-length"]
        yield* storage.receiveUpload(
          {
            key: urlParams.key,
            expires: urlParams.expires,
            max: urlParams.max,
            contentType: urlParams.content_type,
            signature: urlParams.signature
          },
          request.headers["content-type"] ?? "",
          declared === undefined ? undefined : Number(declared),
          request.stream
        )
      }))
  }))
