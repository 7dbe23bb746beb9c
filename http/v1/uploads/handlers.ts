import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Storage } from "../../../services/Storage.ts"
import { StoredObjects } from "../../../services/StoredObjects.ts"
import { PayloadTooLarge } from "../../../src/domain/errors.ts"
import { mediaTypeOf, newUploadKey } from "../../../src/storage/uploadKeys.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

const CSV = "text/csv"

export const UploadsHandlers = HttpApiBuilder.group(Api, "uploads", (handlers) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    const storedObjects = yield* StoredObjects
    return handlers.handle("presign", ({ payload }) =>
      Effect.gen(function*() {
        const principal = yield* requireScope("campaigns:write")
        const { maxBytes, urlTtlSeconds } = storage.limits
        if (payload?.file_size !== undefined && payload.file_size > maxBytes) {
          return yield* new PayloadTooLarge({ message: `The file is larger than the ${maxBytes}-byte upload limit` })
        }
        yield* storedObjects.ensureRoom(principal.organizationId, payload?.file_size ?? 0)
        const key = newUploadKey(principal.organizationId, payload?.file_name)
        const contentType = payload?.content_type === undefined ? CSV : mediaTypeOf(payload.content_type)
        const grant = yield* storage.presignUpload(key, {
          contentType,
          maxBytes,
          expiresInSeconds: urlTtlSeconds,
          exactBytes: payload?.file_size
        })
        return {
          upload_url: grant.url,
          s3_key: key,
          file_key: key,
          expires_in: grant.expiresInSeconds,
          max_size_bytes: payload?.file_size ?? maxBytes,
          content_type: contentType
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
