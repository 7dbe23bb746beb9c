import { Schema } from "effect"
import type { CarrierAccount } from "../../../services/Telephony.ts"
import { carrierRequest } from "./carrierRequest.ts"

/** Twilio's REST API for calls, as the adapter and its warm transfer reach it. */

const PUBLIC_API = "https://api.twilio.com"

export const accountSid = (account: CarrierAccount) => account.credentials.account_sid ?? ""
export const authToken = (account: CarrierAccount) => account.credentials.auth_token ?? ""

export const callsPath = (account: CarrierAccount, suffix = "") =>
  `/2010-04-01/Accounts/${encodeURIComponent(accountSid(account))}/Calls${suffix}.json`

/**
 * What is read of Twilio's Call resource (www.twilio.com/docs/voice/api/call-resource), and of its
 * refusals' `code`. A refusal's `status` is the HTTP status as a number (`{"code": 21211, "status":
 * 400, …}`), a call's is its state as text: both must decode, or the refusal's code is lost.
 */
const TwilioCallReply = Schema.Struct({
  sid: Schema.optional(Schema.String),
  code: Schema.optional(Schema.Union(Schema.Number, Schema.String, Schema.Null)),
  status: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  answered_by: Schema.optional(Schema.NullOr(Schema.String)),
  duration: Schema.optional(Schema.Union(Schema.String, Schema.Number, Schema.Null))
})

/** Twilio's error codes for a `From` it will not place calls from: not verified (21210), not a valid number (21212). */
export const CALLER_ID_CODES = new Set(["21210", "21212"])

export const twilioRequest = (account: CarrierAccount, path: string, form?: URLSearchParams) =>
  carrierRequest("Twilio", account.apiBaseUrl ?? PUBLIC_API, path, {
    method: form ? "POST" : "GET",
    headers: {
      authorization: `Basic ${Buffer.from(`${accountSid(account)}:${authToken(account)}`).toString("base64")}`,
      ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {})
    },
    ...(form ? { body: form.toString() } : {})
  }, TwilioCallReply)
