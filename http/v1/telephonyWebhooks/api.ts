import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { HttpForbidden, HttpNotFound } from "../../errors.ts"
import { IdFromPath, pathSchema } from "../../requestSchemas.ts"

export const TelephonyWebhookPath = pathSchema("TelephonyWebhook", {
  provider: Schema.Literal("twilio", "vonage", "telnyx", "plivo"),
  run_id: IdFromPath
})

export const InboundWebhookPath = pathSchema("InboundCallWebhook", {
  provider: Schema.Literal("twilio", "vonage", "telnyx", "plivo"),
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
  .add(HttpApiEndpoint.post("status", "/:provider/status/:run_id").setPath(TelephonyWebhookPath).addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.post("answer", "/:provider/answer/:run_id").setPath(TelephonyWebhookPath).addSuccess(Markup))
  .add(HttpApiEndpoint.get("answerGet", "/:provider/answer/:run_id").setPath(TelephonyWebhookPath).addSuccess(Markup))
  .add(HttpApiEndpoint.post("inbound", "/:provider/inbound/:config_id").setPath(InboundWebhookPath).addSuccess(Markup))
  .add(HttpApiEndpoint.get("inboundGet", "/:provider/inbound/:config_id").setPath(InboundWebhookPath).addSuccess(Markup))
  .addError(HttpForbidden)
  .addError(HttpNotFound)
  .prefix("/api/v1/telephony")
