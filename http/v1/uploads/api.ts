import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { HttpForbidden, HttpNotFound, HttpPayloadTooLarge } from "../../errors.ts"
import { bodySchema, IntFromString, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

export const PresignUploadRequest = bodySchema("PresignUpload", {
  file_name: Schema.optional(
    Schema.String.pipe(Schema.maxLength(255), Schema.pattern(/\.csv$/i, { message: () => "file_name must end in .csv" }))
  ),
  file_size: Schema.optional(Schema.Int.pipe(Schema.positive())),
  content_type: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^text\/csv\s*(;.*)?$/i, { message: () => "content_type must be text/csv" }))
  )
})

export const PresignUploadResponse = Schema.Struct({
  upload_url: Schema.String,
  s3_key: Schema.String,
  expires_in: Schema.Int,
  max_size_bytes: Schema.Int,
  content_type: Schema.String
}).annotations({ identifier: "PresignedUploadResponse" })

/** The body may be absent altogether (the spec's clients send none): no body reads as `{}`. */
const OptionalPresignUploadRequest = Schema.compose(
  Schema.transform(Schema.Unknown, Schema.Unknown, { decode: (body) => body ?? {}, encode: (body) => body }),
  PresignUploadRequest
)

export const UploadsApi = HttpApiGroup.make("uploads")
  .annotate(OpenApi.Description, "Upload URLs for contact lists. Needs `campaigns:write`.")
  .add(
    HttpApiEndpoint.post("presign", "/api/v1/s3/presigned-upload-url")
      .annotate(OpenApi.Summary, "Get a contacts CSV upload URL")
      .annotate(OpenApi.Description, "A signed URL to `PUT` a contacts CSV to (the S3 bucket, or this server when files are stored locally), bound to its content type and the size cap. Pass the returned key as `source_id` when creating a campaign.")
      .setPayload(OptionalPresignUploadRequest)
      .addSuccess(PresignUploadResponse)
      .addError(HttpPayloadTooLarge)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)

export const LocalUploadQuery = querySchema("LocalUpload", {
  key: Schema.String,
  expires: IntFromString(),
  max: IntFromString(),
  content_type: Schema.String,
  signature: Schema.String
})

/**
 * Where local-storage upload URLs point: the URL's signature is the authorization, so a client
 * PUTs the CSV without a service key, exactly as it would to S3.
 */
export const LocalUploadsApi = HttpApiGroup.make("localUploads")
  .annotate(OpenApi.Description, "Where upload URLs point when files are stored on this server.")
  .add(
    HttpApiEndpoint.put("receive", "/api/v1/uploads/local")
      .annotate(OpenApi.Summary, "Upload a file to a local upload URL")
      .annotate(OpenApi.Description, "Receives the body of a `PUT` to an upload URL issued by this server. No API key: the URL's signature authorizes the upload, for its content type and up to its size cap.")
      .setUrlParams(LocalUploadQuery)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(HttpForbidden)
      .addError(HttpNotFound)
      .addError(HttpPayloadTooLarge)
  )
