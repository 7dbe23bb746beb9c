import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DoNotCallEntry } from "../../../src/compliance/doNotCallEntry.ts"
import { EmptyObject } from "../../../src/domain/wireTypes.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { bodySchema, IntFromString, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

const Region = Schema.String.pipe(Schema.minLength(2), Schema.maxLength(2)).annotations({
  description: "How numbers written without + are read (ISO country code, e.g. US)"
})

export const AddDoNotCallRequest = bodySchema("AddDoNotCall", {
  phone_number: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  reason: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(500)))),
  default_region: Schema.optional(Region)
})

export const ImportDoNotCallRequest = bodySchema("ImportDoNotCall", {
  source_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1024)).annotations({
    description: "The s3_key of a CSV uploaded through /api/v1/s3/presigned-upload-url"
  }),
  default_region: Schema.optional(Region)
})

const NumberPath = pathSchema("DoNotCallNumber", { phone_number: Schema.String })
const ListQuery = querySchema("DoNotCallList", {
  page: Schema.optionalWith(IntFromString({ minimum: 1, description: "Page number (default 1)" }), {
    default: () => 1
  }),
  limit: Schema.optionalWith(IntFromString({ minimum: 1, maximum: 500, description: "Items per page (default 50)" }), {
    default: () => 50
  }),
  search: Schema.optional(
    Schema.String.pipe(Schema.maxLength(32)).annotations({
      description: "Digits the number contains"
    })
  )
})

export const DoNotCallListResponse = Schema.Struct({
  numbers: Schema.Array(DoNotCallEntry),
  total_count: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int
})

export const DoNotCallImportResponse = Schema.Struct({
  imported: Schema.Int,
  already_listed: Schema.Int,
  warnings: Schema.Array(Schema.String)
})

/** The organization's do-not-call list: numbers no campaign or single call dials. */
export const DoNotCallApi = HttpApiGroup.make("doNotCall")
  .annotate(
    OpenApi.Description,
    "Numbers the organization must never dial. Campaigns skip them at import and at every claim; single calls to them are refused. API keys need `campaigns:read` / `campaigns:write`."
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/organizations/dnc")
      .annotate(OpenApi.Summary, "List do-not-call numbers")
      .annotate(
        OpenApi.Description,
        "In number order, a page at a time (`limit`, `offset`); `search` keeps the numbers containing its digits."
      )
      .setUrlParams(ListQuery)
      .addSuccess(DoNotCallListResponse)
  )
  .add(
    HttpApiEndpoint.post("add", "/api/v1/organizations/dnc")
      .annotate(OpenApi.Summary, "Add a number")
      .annotate(OpenApi.Description, "Stored in E.164 form; adding a listed number again updates its reason.")
      .setPayload(AddDoNotCallRequest)
      .addSuccess(DoNotCallEntry)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.post("import", "/api/v1/organizations/dnc/import")
      .annotate(OpenApi.Summary, "Import numbers from CSV")
      .annotate(
        OpenApi.Description,
        "A CSV with a `phone_number` column (and optionally `reason`), read with the same rules as campaign contacts. Listed numbers are kept as they are."
      )
      .setPayload(ImportDoNotCallRequest)
      .addSuccess(DoNotCallImportResponse)
      .addError(HttpValidationFailed)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.get("export", "/api/v1/organizations/dnc/export")
      .annotate(OpenApi.Summary, "Export the list as CSV")
      .annotate(
        OpenApi.Description,
        "Every listed number with its reason, source and when it was added; cells starting with `+` are written `'+…` so spreadsheets keep them as text."
      )
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })))
  )
  .add(
    HttpApiEndpoint.del("remove", "/api/v1/organizations/dnc/:phone_number")
      .annotate(OpenApi.Summary, "Remove a number")
      .annotate(
        OpenApi.Description,
        "The number in any form that normalises to the listed E.164 one; 404 when it is not listed."
      )
      .setPath(NumberPath)
      .addSuccess(EmptyObject)
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
