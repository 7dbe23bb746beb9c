/**
 * The form every provider base URL must have (LLM, STT, TTS, carrier REST). Requests go to fixed
 * paths under it, so nothing in it may change what they are: a query string or a fragment would
 * swallow the path appended to it (`https://host/x?` + `/chat/completions` asks for `/x`), and
 * credentials belong in the key fields, which are encrypted and masked, not in a URL shown as given.
 */
export const baseUrlProblem = (value: string): string | null => {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return "must be an absolute http(s) URL, e.g. https://api.example.com/v1"
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return "must be an http(s) URL, e.g. https://api.example.com/v1"
  }
  if (url.username !== "" || url.password !== "") {
    return "must not carry credentials (user:password@); send them in the key fields"
  }
  if (value.includes("?")) return "must not have a query string: requests go to fixed paths under the base URL"
  if (value.includes("#")) return "must not have a fragment: requests go to fixed paths under the base URL"
  return null
}

/**
 * The endpoint at `path` (starting with `/`) under a base URL, or null when the base is not one
 * (a value stored before these rules were enforced is refused here rather than used).
 */
export const endpointUnder = (base: string, path: string): URL | null => {
  if (baseUrlProblem(base) !== null) return null
  const url = new URL(`${base.replace(/\/+$/, "")}${path}`)
  return url.search === "" && url.hash === "" ? url : null
}
