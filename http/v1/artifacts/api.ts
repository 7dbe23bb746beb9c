import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { HttpForbidden, HttpNotFound, HttpRangeNotSatisfiable } from "../../errors.ts"
import { pathSchema, querySchema } from "../../requestSchemas.ts"

/** Taken as sent: the signature covers the path exactly as it was signed. */
export const ArtifactPath = pathSchema("Artifact", {
  run_id: Schema.String.pipe(Schema.pattern(/^\d{1,18}$/)).annotations({
    description: "The run's id",
    jsonSchema: { type: "integer", minimum: 1 }
  }),
  kind: Schema.Literal("recording", "transcript").annotations({
    description: "recording (audio/wav) or transcript (application/json)"
  })
})

export const ArtifactLinkQuery = querySchema("ArtifactLink", {
  expires: Schema.optional(Schema.String.annotations({ description: "Unix time the link stops working" })),
  sig: Schema.optional(Schema.String.annotations({ description: "The link's signature" }))
})

const ArtifactBytes = HttpApiSchema.Uint8Array({ contentType: "audio/wav" }).annotations({
  description: "The recording (audio/wav) or the transcript (application/json)"
})

/** One declared success type per status is all the generator allows; a transcript comes as JSON. */
const bothTypes = (operation: Record<string, any>) => {
  for (const status of ["200", "206"]) {
    const content = operation.responses?.[status]?.content
    if (content?.["audio/wav"]) content["application/json"] = content["audio/wav"]
  }
  return operation
}

const artifactEndpoint = <const Name extends string>(endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, "GET" | "HEAD">) =>
  endpoint
    .setPath(ArtifactPath)
    .setUrlParams(ArtifactLinkQuery)
    .addSuccess(ArtifactBytes)
    .addSuccess(ArtifactBytes, { status: 206 })
    .addSuccess(
      HttpApiSchema.Empty(302).annotations({ description: "With S3 storage: to a short-lived URL of the object" })
    )
    .addError(HttpForbidden)
    .addError(HttpNotFound)
    .addError(HttpRangeNotSatisfiable)
    .annotate(OpenApi.Transform, bothTypes)

/**
 * The `recording_url` and `transcript_url` of usage reports. The link's signature is its
 * authorization (no API key): it is checked, with its expiry, before anything else.
 */
export const ArtifactsApi = HttpApiGroup.make("artifacts")
  .annotate(
    OpenApi.Description,
    "Downloads of call recordings and transcripts through the signed links of usage reports."
  )
  .add(
    artifactEndpoint(HttpApiEndpoint.get("download", "/api/v1/artifacts/:run_id/:kind"))
      .annotate(OpenApi.Summary, "Download a recording or transcript")
      .annotate(
        OpenApi.Description,
        "Serves a run's recording or transcript from a signed link (recording_url, transcript_url). Ranges are served (206) for seeking in audio."
      )
  )
  .add(
    artifactEndpoint(HttpApiEndpoint.head("describe", "/api/v1/artifacts/:run_id/:kind"))
      .annotate(OpenApi.Summary, "Describe a recording or transcript")
      .annotate(OpenApi.Description, "The headers of the download (type, length, file name) without its body.")
  )
