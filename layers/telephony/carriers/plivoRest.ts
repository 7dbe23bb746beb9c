import { Schema } from "effect"
import { type CarrierAccount, CarrierUnavailable } from "../../../services/Telephony.ts"

/** Plivo's Voice API, as the adapter and its warm transfer reach it. */

const PUBLIC_API = "https://api.plivo.com"

export const authId = (account: CarrierAccount) => account.credentials.auth_id ?? ""

export const headers = (account: CarrierAccount) => ({
  authorization: `Basic ${
    Buffer.from(`${authId(account)}:${account.credentials.auth_token ?? ""}`).toString("base64")
  }`,
  "content-type": "application/json"
})

/** What is read of Plivo's answers: the placement's request UUID and a call's record (plivo.com/docs/voice/api/call). */
export const PlivoCallReply = Schema.Struct({
  request_uuid: Schema.optional(Schema.String),
  call_status: Schema.optional(Schema.NullOr(Schema.String)),
  call_duration: Schema.optional(Schema.Union(Schema.String, Schema.Number, Schema.Null)),
  answer_time: Schema.optional(Schema.NullOr(Schema.String)),
  hangup_cause_name: Schema.optional(Schema.NullOr(Schema.String)),
  error: Schema.optional(Schema.Unknown)
})

export const apiBase = (account: CarrierAccount) => account.apiBaseUrl ?? PUBLIC_API

export const accountPath = (account: CarrierAccount) => `/v1/Account/${encodeURIComponent(authId(account))}`

export const callPath = (account: CarrierAccount, id?: string) =>
  `${accountPath(account)}/Call/${id ? `${encodeURIComponent(id)}/` : ""}`

export const unavailable = (what: string, status: number) =>
  new CarrierUnavailable({ message: `Plivo did not ${what} (HTTP ${status})` })

export type PlivoCallReply = typeof PlivoCallReply.Type
