import { Schema } from "effect"

/**
 * What each carrier needs to place calls, and which of those fields are secrets: secrets are
 * encrypted at rest and masked on every read; the rest is stored and shown as given.
 */

const Required = (name: string) =>
  Schema.String.pipe(
    Schema.filter((value) => value.trim().length > 0 || `${name} must not be empty`),
    Schema.maxLength(8192)
  )

const BaseUrl = Schema.String.pipe(
  Schema.filter((value) => {
    try {
      const url = new URL(value)
      return (url.protocol === "http:" || url.protocol === "https:") || "api_base_url must be an http(s) URL"
    } catch {
      return "api_base_url must be an http(s) URL"
    }
  })
)

/** Every carrier offers answering-machine detection; campaigns tell voicemail from a conversation by it. */
const common = { api_base_url: Schema.optional(Schema.NullOr(BaseUrl)), amd_enabled: Schema.optional(Schema.Boolean) }

export const TwilioConfig = Schema.Struct({
  provider: Schema.Literal("twilio"),
  account_sid: Required("account_sid"),
  auth_token: Required("auth_token"),
  ...common
})

export const VonageConfig = Schema.Struct({
  provider: Schema.Literal("vonage"),
  api_key: Required("api_key"),
  api_secret: Required("api_secret"),
  application_id: Required("application_id"),
  private_key: Required("private_key"),
  signature_secret: Schema.optional(Schema.NullOr(Schema.String)),
  ...common
})

export const TelnyxConfig = Schema.Struct({
  provider: Schema.Literal("telnyx"),
  api_key: Required("api_key"),
  connection_id: Schema.optional(Schema.NullOr(Schema.String)),
  webhook_public_key: Schema.optional(Schema.NullOr(Schema.String)),
  ...common
})

export const PlivoConfig = Schema.Struct({
  provider: Schema.Literal("plivo"),
  auth_id: Required("auth_id"),
  auth_token: Required("auth_token"),
  application_id: Schema.optional(Schema.NullOr(Schema.String)),
  ...common
})

export const ProviderConfig = Schema.Union(TwilioConfig, VonageConfig, TelnyxConfig, PlivoConfig)
export type ProviderConfig = typeof ProviderConfig.Type
export type Provider = ProviderConfig["provider"]

export const secretFields: Readonly<Record<Provider, ReadonlyArray<string>>> = {
  twilio: ["auth_token"],
  vonage: ["api_secret", "private_key", "signature_secret"],
  telnyx: ["api_key"],
  plivo: ["auth_token"]
}

/** Each provider's public REST API; a configuration may point elsewhere (a regional edge, a local server). */
export const defaultApiBaseUrl: Readonly<Record<Provider, string>> = {
  twilio: "https://api.twilio.com",
  vonage: "https://api.nexmo.com",
  telnyx: "https://api.telnyx.com",
  plivo: "https://api.plivo.com"
}

const MASK = "****"

/** Enough of a secret to recognise it, never enough to use it. */
export const mask = (value: string) => (value.length >= 12 ? `${MASK}${value.slice(-4)}` : MASK)

/** A value a client read from us and sent back unchanged. */
export const isMasked = (value: unknown) => typeof value === "string" && value.startsWith(MASK)

/** Splits a provider config into what is stored in clear and what is encrypted. */
export const splitSecrets = (config: ProviderConfig) => {
  const secrets: Record<string, string> = {}
  const settings: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(config)) {
    if (name === "provider" || name === "api_base_url") continue
    if (secretFields[config.provider].includes(name)) {
      if (typeof value === "string" && value !== "") secrets[name] = value
    } else if (value !== undefined) settings[name] = value
  }
  return { settings, secrets }
}

/**
 * An update may send back the masked values it read: those (and omitted secrets) keep the stored
 * secret, as long as the provider is unchanged.
 */
export const keepUnchangedSecrets = (
  provider: Provider,
  given: Record<string, unknown>,
  stored: Record<string, string>
): Record<string, unknown> => {
  const merged = { ...given }
  for (const name of secretFields[provider]) {
    if ((merged[name] === undefined || isMasked(merged[name])) && stored[name] !== undefined) merged[name] = stored[name]
  }
  return merged
}
