import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { JsonObject, Timestamp } from "../../../src/domain/wireTypes.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { bodySchema, IdFromPath, pathSchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

export const BrowserCallRequest = bodySchema("BrowserCall", {
  initial_context: Schema.optional(JsonObject),
  use_draft: Schema.optional(Schema.Boolean)
})

export const BrowserCallResponse = Schema.Struct({
  workflow_run_id: Schema.Int,
  media_url: Schema.String.annotations({
    description:
      "WebSocket URL for the call's audio (signed; expires at expires_at): binary PCM16 16 kHz frames both ways, JSON control messages"
  }),
  expires_at: Timestamp
}).annotations({ identifier: "BrowserCallResponse" })

/**
 * Browser test calls: talk to an agent from a page (GET /call serves one). Needs `agents:write`.
 */
export const VoiceCallsApi = HttpApiGroup.make("voiceCalls")
  .annotate(OpenApi.Description, "Browser test calls. Needs `agents:write`.")
  .add(
    HttpApiEndpoint.post("startBrowserCall", "/:workflow_id/browser-calls")
      .annotate(OpenApi.Summary, "Start a browser call")
      .annotate(
        OpenApi.Description,
        "Starts a voice call with the workflow's published version (`use_draft: true` for the draft) and answers a signed WebSocket `media_url` carrying the call's audio, valid until `expires_at`."
      )
      .setPath(pathSchema("BrowserCallWorkflow", { workflow_id: IdFromPath }))
      .setPayload(BrowserCallRequest)
      .addSuccess(BrowserCallResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/workflow")
