import { Clock, Effect, Schema } from "effect"
import type { CarrierAccount } from "../../../services/Telephony.ts"
import { vonageApiToken } from "../../../src/telephony/vonageJwt.ts"

/** Vonage's Voice API, as the adapter and its warm transfer reach it. */

const PUBLIC_API = "https://api.nexmo.com"

/** Each request's headers, with a token signed for the moment (from `Clock`) it is sent. */
export const headers = (account: CarrierAccount) =>
  Effect.map(Clock.currentTimeMillis, (now) => ({
    authorization: `Bearer ${
      vonageApiToken(
        account.credentials.application_id ?? "",
        account.credentials.private_key ?? "",
        Math.floor(now / 1000)
      )
    }`,
    "content-type": "application/json"
  }))

export const apiBase = (account: CarrierAccount) => account.apiBaseUrl ?? PUBLIC_API

export const callsPath = (uuid?: string) => `/v1/calls${uuid ? `/${encodeURIComponent(uuid)}` : ""}`

/** What is read of Vonage's call object (developer.vonage.com/en/api/voice#getCall). */
export const VonageCallReply = Schema.Struct({
  uuid: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  duration: Schema.optional(Schema.Union(Schema.String, Schema.Number, Schema.Null)),
  /** Problem details (RFC 7807) of a refused request: the fields at fault. */
  invalid_parameters: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.optional(Schema.String) })))
})

/** Vonage numbers go without the leading "+". */
export const digits = (number: string) => number.replace(/^\+/, "")
