import { isMaskedKey } from "./secretMask.ts"

/**
 * Where a stored credential is sent: its provider, the base URL its requests go to, and the
 * account it belongs to (`null` where a part does not apply). Built by each kind of setting.
 */
export type CredentialEndpoint = Readonly<Record<string, string | null>>

/** A base URL as compared: `https://api.x.com/` and `https://api.x.com` are the same endpoint. */
export const comparableUrl = (url: string | null | undefined): string | null => {
  if (url === null || url === undefined) return null
  try {
    return new URL(url).href.replace(/\/+$/, "")
  } catch {
    return url
  }
}

const sameEndpoint = (before: CredentialEndpoint, after: CredentialEndpoint) =>
  [...new Set([...Object.keys(before), ...Object.keys(after)])].every((part) =>
    (before[part] ?? null) === (after[part] ?? null)
  )

/**
 * What an update does to one stored credential:
 * - `Replaced`: a value was sent in clear and replaces it;
 * - `Kept`: omitted or sent back masked, and the endpoint is unchanged, so the stored one stays;
 * - `Withheld`: omitted while the endpoint changed, so the stored one is not carried over;
 * - `MaskedOnly`: the mask was sent where nothing may be kept, so there is no real value to use;
 * - `Absent`: nothing was sent and nothing is stored.
 */
type CarriedCredential<S> =
  | { readonly _tag: "Replaced"; readonly value: string }
  | { readonly _tag: "Kept"; readonly stored: S }
  | { readonly _tag: "Withheld" }
  | { readonly _tag: "MaskedOnly" }
  | { readonly _tag: "Absent" }

/**
 * The one rule for every stored credential (model keys, carrier secrets, and any to come): a
 * stored secret never follows a changed endpoint. Changing where a credential is sent (provider,
 * base URL, account) requires sending the credential again; otherwise a caller who can only read
 * the mask could point the setting at its own host and receive the secret.
 */
export const carryCredential = <S>(
  given: string | undefined,
  stored: S | null | undefined,
  before: CredentialEndpoint | null,
  after: CredentialEndpoint
): CarriedCredential<S> => {
  if (given !== undefined && !isMaskedKey(given)) return { _tag: "Replaced", value: given }
  const unchanged = before !== null && sameEndpoint(before, after)
  if (stored !== null && stored !== undefined && unchanged) return { _tag: "Kept", stored }
  if (given !== undefined) return { _tag: "MaskedOnly" }
  return stored !== null && stored !== undefined ? { _tag: "Withheld" } : { _tag: "Absent" }
}
