/**
 * The form of each carrier's configuration (src/telephony/providerConfig.ts): which fields it
 * takes, which are required and which are secrets (write-only, shown masked).
 */
export interface CarrierField {
  readonly name: string
  readonly label: string
  readonly required: boolean
  readonly secret: boolean
  readonly multiline?: boolean
}

const field = (name: string, label: string, options: Partial<Omit<CarrierField, "name" | "label">> = {}) => ({
  name,
  label,
  required: options.required ?? true,
  secret: options.secret ?? false,
  ...(options.multiline ? { multiline: true } : {})
})

export const carriers = {
  twilio: {
    label: "Twilio",
    fields: [field("account_sid", "Account SID"), field("auth_token", "Auth token", { secret: true })]
  },
  vonage: {
    label: "Vonage",
    fields: [
      field("api_key", "API key"),
      field("api_secret", "API secret", { secret: true }),
      field("application_id", "Application ID"),
      field("private_key", "Private key (PEM)", { secret: true, multiline: true }),
      field("signature_secret", "Signature secret", { secret: true, required: false })
    ]
  },
  telnyx: {
    label: "Telnyx",
    fields: [
      field("api_key", "API key", { secret: true }),
      field("connection_id", "Connection ID", { required: false }),
      field("webhook_public_key", "Webhook public key", { required: false })
    ]
  },
  plivo: {
    label: "Plivo",
    fields: [
      field("auth_id", "Auth ID"),
      field("auth_token", "Auth token", { secret: true }),
      field("application_id", "Application ID", { required: false })
    ]
  }
} as const satisfies Record<string, { readonly label: string; readonly fields: ReadonlyArray<CarrierField> }>

export type Carrier = keyof typeof carriers

export const isCarrier = (value: string): value is Carrier => value in carriers
