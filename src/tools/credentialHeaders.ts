import { maskedKey } from "../domain/secretMask.ts"
import { type CredentialData, type CredentialType, SECRET_FIELDS } from "./credentialRecord.ts"

/** The header a credential puts on a tool's request (Dograh's `build_auth_header`); none for `none`. */
export const credentialHeader = (
  type: CredentialType,
  data: CredentialData
): { readonly name: string; readonly value: string } | null => {
  switch (type) {
    case "bearer_token":
      return { name: "Authorization", value: `Bearer ${data["token"] ?? ""}` }
    case "basic_auth":
      return {
        name: "Authorization",
        value: `Basic ${Buffer.from(`${data["username"] ?? ""}:${data["password"] ?? ""}`).toString("base64")}`
      }
    case "api_key":
      return { name: data["header_name"] ?? "X-API-Key", value: data["api_key"] ?? "" }
    case "custom_header":
      return { name: data["header_name"] ?? "X-Custom", value: data["header_value"] ?? "" }
    case "none":
      return null
  }
}

/** A secret as it may be shown: its last four characters when it is long enough not to be guessed from them. */
export const maskSecret = (value: string): string => maskedKey(value.length >= 12 ? value.slice(-4) : "")

/** The credential's data as shown: secret fields masked, the rest (header names, user name) as stored. */
export const maskedCredentialData = (type: CredentialType, data: CredentialData): Record<string, string> =>
  Object.fromEntries(
    Object.entries(data).map((
      [field, value]
    ) => [field, SECRET_FIELDS[type].includes(field) ? maskSecret(value) : value])
  )
