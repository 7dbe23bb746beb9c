/**
 * A provider's endpoint under the organization's `base_url` (a regional host, a proxy, or a
 * loopback stand-in in tests) or the provider's own. A base that already names the API version
 * (`…/v1`) is not given it twice.
 */
export const endpointUrl = (baseUrl: string | null, defaultBase: string, path: string): URL => {
  const base = (baseUrl ?? defaultBase).replace(/\/+$/, "")
  const version = /^\/v\d+\//.exec(path)?.[0].slice(0, -1)
  const joined = version !== undefined && base.endsWith(version) ? base + path.slice(version.length) : base + path
  return new URL(joined)
}

/** The WebSocket twin of an HTTP(S) URL: providers document one host for both. */
export const asWebSocketUrl = (url: URL): URL => {
  const copy = new URL(url)
  if (copy.protocol === "http:") copy.protocol = "ws:"
  else if (copy.protocol === "https:") copy.protocol = "wss:"
  return copy
}
