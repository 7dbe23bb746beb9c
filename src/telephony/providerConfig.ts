import { Schema } from "effect"
import { keyHint, maskedKey } from "../domain/secretMask.ts"
import { carryCredential, comparableUrl, type CredentialEndpoint } from "../domain/storedCredentials.ts"
import { baseUrlProblem } from "../outbound/baseUrls.ts"

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
  Schema.maxLength(500),
  Schema.filter((value) => {
    const problem = baseUrlProblem(value)
    return problem === null || `api_base_url ${problem}`
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

/**
 * The carriers, in one list: it decodes webhook paths and configurations' providers, and dispatch
 * (adapters, media codecs) is keyed by the same type, so a carrier added here is missing nowhere
 * without a type error.
 */
export const CarrierProvider = Schema.Literal("twilio", "vonage", "telnyx", "plivo")
export const carrierProviders: ReadonlyArray<Provider> = CarrierProvider.literals

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

/** Enough of a secret to recognise it, never enough to use it. */
export const mask = (value: string) => maskedKey(keyHint(value))

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

/** The fields naming the carrier account a configuration's secrets belong to. */
const accountFields: Readonly<Record<Provider, ReadonlyArray<string>>> = {
  twilio: ["account_sid"],
  vonage: ["api_key", "application_id"],
  telnyx: [],
  plivo: ["auth_id"]
}

const isProvider = (value: unknown): value is Provider =>
  typeof value === "string" && Object.hasOwn(secretFields, value)

/** Where a configuration's secrets are sent: the provider, its REST API and the account. */
const credentialEndpoint = (config: Readonly<Record<string, unknown>>): CredentialEndpoint => {
  const text = (name: string) => (typeof config[name] === "string" ? config[name] : null)
  const provider = isProvider(config["provider"]) ? config["provider"] : null
  return {
    provider,
    api_base_url: comparableUrl(text("api_base_url") ?? (provider ? defaultApiBaseUrl[provider] : null)),
    ...Object.fromEntries((provider ? accountFields[provider] : []).map((name) => [name, text(name)]))
  }
}

/**
 * An update's secrets under the rule for stored credentials: a secret omitted or sent back masked
 * keeps the stored one only while provider, account and api_base_url stay the same. `withheld`
 * secrets were stored but not carried over to the changed endpoint; `maskedOnly` ones came back
 * masked where no stored value may be used.
 */
export const carrySecrets = (
  stored: { readonly config: Readonly<Record<string, unknown>>; readonly secrets: Readonly<Record<string, string>> },
  given: Readonly<Record<string, unknown>>
) => {
  const merged: Record<string, unknown> = { ...given }
  const withheld: Array<string> = []
  const maskedOnly: Array<string> = []
  const provider = given["provider"]
  const before = credentialEndpoint(stored.config)
  const after = credentialEndpoint(given)
  // Another provider's secrets are no candidates at all: there is nothing to send again.
  const candidates = before["provider"] === after["provider"] ? stored.secrets : {}
  for (const name of isProvider(provider) ? secretFields[provider] : []) {
    const value = merged[name]
    if (value !== undefined && typeof value !== "string") continue
    const carried = carryCredential(value, candidates[name], before, after)
    if (carried._tag === "Kept") merged[name] = carried.stored
    else if (carried._tag === "Withheld") withheld.push(name)
    else if (carried._tag === "MaskedOnly") {
      delete merged[name]
      maskedOnly.push(name)
    }
  }
  return { merged, withheld, maskedOnly }
}
