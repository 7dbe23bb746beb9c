import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CarrierProvider } from "../../../src/telephony/providerConfig.ts"
import { HttpForbidden, HttpNotFound } from "../../errors.ts"
import { IdFromPath, pathSchema } from "../../requestSchemas.ts"

export const TelephonyWebhookPath = pathSchema("TelephonyWebhook", {
  provider: CarrierProvider,
  run_id: IdFromPath.pipe(Schema.brand("RunId"))
})

export const InboundWebhookPath = pathSchema("InboundCallWebhook", {
  provider: CarrierProvider,
  config_id: IdFromPath
})

const Markup = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/xml" }))

/**
 * Where carriers report on calls and announce incoming ones (a number's answer URL is
 * `/api/v1/telephony/{provider}/inbound/{config_id}`). No API key: each request is authenticated by the
 * provider's own signature, checked with the credentials of the configuration that placed the
 * call against the public URL it was sent to. Bodies are read raw (form or JSON, as each
 * provider sends them), because the signature covers the exact bytes.
 */
export const TelephonyWebhooksApi = HttpApiGroup.make("telephonyWebhooks")
  .annotate(
    OpenApi.Description,
    "Callbacks from carriers. No API key: each request is authenticated by the carrier's signature, checked with the credentials of the configuration concerned; a bad signature answers 403."
  )
  .add(
    HttpApiEndpoint.post("status", "/:provider/status/:run_id")
      .annotate(OpenApi.Summary, "Carrier call status callback")
      .annotate(
        OpenApi.Description,
        "Where the carrier reports a campaign call's progress and outcome; a repeated or late callback changes nothing."
      )
      .setPath(TelephonyWebhookPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.post("answer", "/:provider/answer/:run_id")
      .annotate(OpenApi.Summary, "Carrier answer URL")
      .annotate(
        OpenApi.Description,
        "Answers a placed call with the carrier's markup connecting its audio to the agent's media stream."
      )
      .setPath(TelephonyWebhookPath)
      .addSuccess(Markup)
  )
  .add(
    HttpApiEndpoint.get("answerGet", "/:provider/answer/:run_id")
      .annotate(OpenApi.Summary, "Carrier answer URL (GET)")
      .annotate(OpenApi.Description, "The same answer, for carriers configured to fetch it with GET.")
      .setPath(TelephonyWebhookPath)
      .addSuccess(Markup)
  )
  .add(
    HttpApiEndpoint.post("transferEvent", "/:provider/transfer/:run_id")
      .annotate(OpenApi.Summary, "Carrier transfer callback")
      .annotate(
        OpenApi.Description,
        "Where the carrier reports a cold transfer's destination (answered, busy, no answer, failed) and, for Twilio and Plivo, asks what the call does once its <Dial> is over."
      )
      .setPath(TelephonyWebhookPath)
      .addSuccess(Markup)
  )
  .add(
    HttpApiEndpoint.post("transferMarkup", "/:provider/transfer/:run_id/markup")
      .annotate(OpenApi.Summary, "Carrier transfer instructions")
      .annotate(
        OpenApi.Description,
        "The <Dial> a transferred call runs, for carriers that fetch it (Plivo's aleg_url); the destination and ring time are in the signed query."
      )
      .setPath(TelephonyWebhookPath)
      .addSuccess(Markup)
  )
  .add(
    HttpApiEndpoint.post("inbound", "/:provider/inbound/:config_id")
      .annotate(OpenApi.Summary, "Incoming call webhook")
      .annotate(
        OpenApi.Description,
        "Answers a call to one of the configuration's numbers with the agent assigned to that number; a number without an agent (or without a published version) answers 404."
      )
      .setPath(InboundWebhookPath)
      .addSuccess(Markup)
  )
  .add(
    HttpApiEndpoint.get("inboundGet", "/:provider/inbound/:config_id")
      .annotate(OpenApi.Summary, "Incoming call webhook (GET)")
      .annotate(OpenApi.Description, "The same answer, for carriers configured to fetch it with GET.")
      .setPath(InboundWebhookPath)
      .addSuccess(Markup)
  )
  .addError(HttpForbidden)
  .addError(HttpNotFound)
  .prefix("/api/v1/telephony")
