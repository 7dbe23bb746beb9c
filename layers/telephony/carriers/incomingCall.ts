import { Option } from "effect"
import type { IncomingCall, WebhookRequest } from "../../../services/Telephony.ts"

/**
 * An incoming call announced the Twilio way, as form fields `From`, `To` and the call's id in
 * `idField` (Twilio and Telnyx TeXML: CallSid; Plivo: CallUUID).
 */
export const formIncomingCall = (idField: string) => (webhook: WebhookRequest): Option.Option<IncomingCall> => {
  const fields = new URLSearchParams(webhook.rawBody)
  const providerCallId = fields.get(idField)
  const from = fields.get("From")
  const to = fields.get("To")
  return providerCallId && from && to ? Option.some({ providerCallId, from, to }) : Option.none()
}
