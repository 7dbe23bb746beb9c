import * as crypto from "node:crypto"

/**
 * Plivo's V3 webhook signature: base64(HMAC-SHA256(auth token, signing string + "." + nonce)).
 * For a POST the signing string is the URL without its query, then "?" and the sorted query
 * (`k=v&…`), a "." when both are present, then the sorted form fields, each name followed by its
 * value with nothing between them or between fields (`kv…`), as the plivo SDK's
 * `validateV3Signature` builds it (`get_sorted_params_string`).
 */
const sortedQuery = (params: URLSearchParams) =>
  [...new Set(params.keys())].sort().flatMap((key) => params.getAll(key).sort().map((value) => `${key}=${value}`)).join(
    "&"
  )

const sortedFields = (params: URLSearchParams) =>
  [...new Set(params.keys())].sort().flatMap((key) => params.getAll(key).sort().map((value) => `${key}${value}`)).join(
    ""
  )

export const plivoSigningString = (url: string, form: URLSearchParams) => {
  const parsed = new URL(url)
  const base = `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  const query = sortedQuery(parsed.searchParams)
  const hasFields = [...form.keys()].length > 0
  return `${base}${query.length > 0 || hasFields ? `?${query}` : ""}${query.length > 0 && hasFields ? "." : ""}${
    sortedFields(form)
  }`
}

export const plivoSignature = (authToken: string, url: string, form: URLSearchParams, nonce: string) =>
  crypto.createHmac("sha256", authToken).update(`${plivoSigningString(url, form)}.${nonce}`).digest("base64")

const same = (a: string, b: string) => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && crypto.timingSafeEqual(left, right)
}

/** Accounts with several auth tokens get comma-separated signatures; one match is enough. */
export const isValidPlivoSignature = (
  authToken: string,
  url: string,
  form: URLSearchParams,
  nonce: string | undefined,
  signature: string | undefined
) => {
  if (!nonce || !signature || !authToken) return false
  const expected = plivoSignature(authToken, url, form, nonce)
  return signature.split(",").some((candidate) => same(candidate.trim(), expected))
}
