import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { JSONSchema, Schema } from "effect"
import { CSV_MEDIA_TYPES } from "../../../src/storage/csvMediaTypes.ts"
import { HttpForbidden, HttpNotFound, HttpPayloadTooLarge } from "../../errors.ts"
import { bodySchema, IntFromString, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

export const PresignUploadRequest = bodySchema("PresignUpload", {
  file_name: Schema.optional(
    Schema.String.pipe(
      Schema.maxLength(255),
      Schema.pattern(/\.csv$/i, { message: () => "file_name must end in .csv" })
    )
  ),
  file_size: Schema.optional(
    Schema.Int.pipe(Schema.positive()).annotations({
      description: "The file's size in bytes: the upload URL then takes exactly that many"
    })
  ),
  content_type: Schema.optional(
    Schema.String.pipe(
      Schema.filter((value) => CSV_MEDIA_TYPES.includes(value.split(";")[0]!.trim().toLowerCase()), {
        message: () => `content_type must be one a .csv file is sent as: ${CSV_MEDIA_TYPES.join(", ")}`
      })
    ).annotations({
      description: `What the file will be sent as (default text/csv): one of ${CSV_MEDIA_TYPES.join(", ")}`
    })
  )
})

export const PresignUploadResponse = Schema.Struct({
  upload_url: Schema.String,
  s3_key: Schema.String,
  file_key: Schema.String.annotations({ description: "The same key as s3_key (the name Dograh's API gives it)" }),
  expires_in: Schema.Int,
  max_size_bytes: Schema.Int,
  content_type: Schema.String
}).annotations({ identifier: "PresignedUploadResponse" })

/** The body may be absent altogether (the spec's clients send none): no body reads as `{}`. */
const OptionalPresignUploadRequest = Schema.compose(
  Schema.transform(Schema.Unknown, Schema.Unknown, { decode: (body) => body ?? {}, encode: (body) => body }),
  PresignUploadRequest
)

/** The generated document would describe the decoding's untyped first step and call the body required. */
const describeOptionalBody = (operation: Record<string, any>) => ({
  ...operation,
  requestBody: {
    required: false,
    content: {
      "application/json": {
        schema: JSONSchema.fromAST(PresignUploadRequest.ast, {
          definitions: {},
          target: "openApi3.1",
          topLevelReferenceStrategy: "skip"
        })
      }
    }
  }
})

export const UploadsApi = HttpApiGroup.make("uploads")
  .annotate(OpenApi.Description, "Upload URLs for contact lists. Needs `campaigns:write`.")
  .add(
    HttpApiEndpoint.post("presign", "/api/v1/s3/presigned-upload-url")
      .annotate(OpenApi.Summary, "Get a contacts CSV upload URL")
      .annotate(
        OpenApi.Description,
        "A signed URL to `PUT` a contacts CSV to (the S3 bucket, or this server when files are stored locally), bound to its content type and the size cap. Pass the returned key as `source_id` when creating a campaign."
      )
      .setPayload(OptionalPresignUploadRequest)
      .addSuccess(PresignUploadResponse)
      .addError(HttpPayloadTooLarge)
      .annotate(OpenApi.Transform, describeOptionalBody)
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
      .annotate(
        OpenApi.Description,
        "Receives the body of a `PUT` to an upload URL issued by this server. No API key: the URL's signature authorizes the upload, for its content type and up to its size cap."
      )
      .setUrlParams(LocalUploadQuery)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(HttpForbidden)
      .addError(HttpNotFound)
      .addError(HttpPayloadTooLarge)
  )
