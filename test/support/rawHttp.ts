import * as http from "node:http"

interface RawRequest {
  readonly method: string
  /** Already percent-encoded: sent exactly as given. */
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string | Uint8Array | undefined
}

type RawReply =
  | { readonly status: number; readonly body: string }
  | { readonly error: string }

const REPLY_EXCERPT = 2_000

/**
 * One HTTP request with nothing normalised on the way (any method with any body, any bytes, any
 * content type), which `fetch` would not allow. Only the start of the reply is kept.
 */
export const sendRaw = (baseUrl: string, request: RawRequest, agent: http.Agent, timeoutMs = 20_000) =>
  new Promise<RawReply>((resolve) => {
    const url = new URL(baseUrl)
    const body = typeof request.body === "string" ? Buffer.from(request.body, "utf8") : request.body
    const outgoing = http.request({
      host: url.hostname,
      port: url.port,
      method: request.method,
      path: request.path,
      agent,
      headers: { ...request.headers, ...(body ? { "content-length": String(body.byteLength) } : {}) },
      timeout: timeoutMs
    }, (response) => {
      const chunks: Array<Buffer> = []
      let kept = 0
      response.on("data", (chunk: Buffer) => {
        if (kept < REPLY_EXCERPT) {
          chunks.push(chunk)
          kept += chunk.byteLength
        }
      })
      response.on(
        "end",
        () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8").slice(0, REPLY_EXCERPT)
          })
      )
      response.on("error", (error) => resolve({ error: error.message }))
    })
    outgoing.on("timeout", () => outgoing.destroy(new Error(`no reply within ${timeoutMs} ms`)))
    outgoing.on("error", (error) => resolve({ error: error.message }))
    outgoing.end(body)
  })
