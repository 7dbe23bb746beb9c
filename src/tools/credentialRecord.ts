import { Schema } from "effect"
import { Timestamp } from "../domain/wireTypes.ts"

/** Dograh's credential types (`/api/v1/credentials`): how a stored secret is put on a tool's request. */
export const CredentialType = Schema.Literal("none", "api_key", "bearer_token", "basic_auth", "custom_header")
export type CredentialType = typeof CredentialType.Type

const Secret = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4000))
/** An HTTP header name (RFC 9110 token); the headers the transport owns cannot be set this way. */
const HeaderName = Schema.String.pipe(
  Schema.pattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, { message: () => "must be an HTTP header name" }),
  Schema.filter((name) => !FORBIDDEN_HEADERS.has(name.toLowerCase()) || `${name} cannot be set by a tool`)
)

/** Headers the HTTP client owns: a tool setting them would break the request or its framing. */
export const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "proxy-authorization",
  "expect"
])

/** What each type stores; the fields named in `SECRET_FIELDS` are encrypted and only ever shown masked. */
export const credentialDataSchemas = {
  none: Schema.Struct({}),
  api_key: Schema.Struct({
    header_name: Schema.optionalWith(HeaderName, { default: () => "X-API-Key" }),
    api_key: Secret
  }),
  bearer_token: Schema.Struct({ token: Secret }),
  basic_auth: Schema.Struct({ username: Schema.String.pipe(Schema.maxLength(500)), password: Secret }),
  custom_header: Schema.Struct({ header_name: HeaderName, header_value: Secret })
} as const

export const SECRET_FIELDS: Readonly<Record<CredentialType, ReadonlyArray<string>>> = {
  none: [],
  api_key: ["api_key"],
  bearer_token: ["token"],
  basic_auth: ["password"],
  custom_header: ["header_value"]
}

export type CredentialData = Readonly<Record<string, string>>

/**
 * A credential as shown: never its secrets. `credential_data` has the secret fields masked
 * (`****abcd`) and the rest (header names, user name) as stored. `bound_host` is the one host its
 * secrets may be sent to: set when the credential is created with `host`, or when a tool first
 * uses it; a tool at another host is refused until the secret is sent again.
 */
export const Credential = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  credential_type: CredentialType,
  credential_data: Schema.Record({ key: Schema.String, value: Schema.String }),
  bound_host: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "CredentialResponse" })
export type Credential = typeof Credential.Type
