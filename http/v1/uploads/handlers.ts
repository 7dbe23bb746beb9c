import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { PayloadTooLarge } from "../../../src/domain/errors.ts"
import { newUploadKey } from "../../../src/storage/uploadKeys.ts"
import { Storage } from "../../../services/Storage.ts"
import { Api } from "../../api.ts"
import { publicUrl } from "../../publicUrl.ts"
import { requireScope } from "../../security.ts"

const CSV = "text/csv"


export const UploadsHandlers = HttpApiBuilder.group(Api, "uploads", (handlers) =>
  Effect.gen(function* () {
    const storage = yield* Storage
    const baseUrl = yield* publicUrl
    return handlers.handle("presign", ({ payload }) =>
      Effect.gen(function* () {
        const principal = yield* requireScope("campaigns:write")
        const { maxBytes, urlTtlSeconds } = storage.limits
        if (payload?.file_size !== undefined && payload.file_size > maxBytes) {
          return yield* new PayloadTooLarge({ message: `The file is larger than the ${maxBytes}-byte upload limit` })
        }
        const key = newUploadKey(principal.organizationId, payload?.file_name)
        const grant = yield* storage.presignUpload(key, {
          contentType: CSV,
          maxBytes,
          expiresInSeconds: urlTtlSeconds,
          exactBytes: payload?.file_size,
          publicUrl: baseUrl
        })
        return {
          upload_url: grant.url,
          s3_key: key,
          expires_in: grant.expiresInSeconds,
          max_size_bytes: payload?.file_size ?? maxBytes,
          content_type: CSV
        }
      }))
  }))

export const LocalUploadsHandlers = HttpApiBuilder.group(Api, "localUploads", (handlers) =>
  Effect.gen(function* () {
    const storage = yield* Storage
    return handlers.handleRaw("receive", ({ request, urlParams }) =>
      Effect.gen(function* () {
        const declared = request.headers["content-length"]
        yield* storage.receiveUpload(
          { key: urlParams.key, expires: urlParams.expires, max: urlParams.max, contentType: urlParams.content_type, signature: urlParams.signature },
          request.headers["content-type"] ?? "",
          declared === undefined ? undefined : Number(declared),
          request.stream
        )
      }))
  }))
