import { Schema } from "effect"
import type { CarrierAccount, TransferOutcome } from "../../../services/Telephony.ts"

/** Telnyx's Call Control API, as the adapter and its warm transfer reach it. */

const PUBLIC_API = "https://api.telnyx.com"

export const headers = (account: CarrierAccount) => ({
  authorization: `Bearer ${account.credentials.api_key ?? ""}`,
  "content-type": "application/json"
})

/** What is read of Telnyx's call object (developers.telnyx.com/api/call-control/dial-call). */
export const TelnyxCallReply = Schema.Struct({
  data: Schema.optional(Schema.Struct({
    call_control_id: Schema.optional(Schema.String),
    is_alive: Schema.optional(Schema.Boolean),
    call_duration: Schema.optional(Schema.NullOr(Schema.Number))
  })),
  /** JSON:API errors; `source.pointer` names the request field at fault. */
  errors: Schema.optional(Schema.Array(Schema.Struct({
    code: Schema.optional(Schema.String),
    source: Schema.optional(Schema.Struct({ pointer: Schema.optional(Schema.String) }))
  })))
})

export const apiBase = (account: CarrierAccount) => account.apiBaseUrl ?? PUBLIC_API

/**
 * A transfer's destination leg hanging up before it was bridged: why it did not answer
 * (developers.telnyx.com/api/call-control/transfer-call: a failed transfer sends `call.hangup`
 * for leg B, and the original call stays up).
 */
export const transferOutcomeOfHangup = (cause: string | undefined): Exclude<TransferOutcome, "answered"> => {
  switch (cause) {
    case "user_busy":
      return "busy"
    case "timeout":
    case "no_answer":
      return "no_answer"
    default:
      return "failed"
  }
}
