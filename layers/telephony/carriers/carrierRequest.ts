import { Effect } from "effect"
import { OutboundHttp } from "../../../services/OutboundHttp.ts"
import { CarrierUnavailable } from "../../../services/Telephony.ts"
import { endpointUnder } from "../../../src/outbound/baseUrls.ts"
import { readReply, REPLY_LIMITS } from "../../outbound/replyBody.ts"

const REQUEST_TIMEOUT_MS = 10_000

interface CarrierReply {
  readonly status: number
  readonly body: Record<string, any>
}

/**
 * One REST call to a carrier at `path` (and `query`) under its API base, through the outbound client (policy,
 * no redirects) with the reply read within REPLY_LIMITS.carrierJson; the body is read as JSON when
 * there is one. The failure's message is for the operator's log only (it may name the network error).
 */
export const carrierRequest = (
  provider: string,
  base: string,
  path: string,
  init: {
    readonly method: "GET" | "POST" | "PUT" | "DELETE"
    readonly headers: Record<string, string>
    readonly body?: string
    /** Query fields of the request itself; the base URL can never carry any. */
    readonly query?: Record<string, string>
  }
) =>
  Effect.flatMap(OutboundHttp, (outbound) =>
    Effect.tryPromise({
      try: async (signal): Promise<CarrierReply> => {
        const url = endpointUnder(base, path)
        if (url === null) throw new Error(`the API base URL ${base} has a query string, a fragment or credentials`)
        if (init.query) url.search = new URLSearchParams(init.query).toString()
        const response = await outbound.send("carrier", {
          url,
          method: init.method,
          headers: {
            ...init.headers,
            ...(init.body === undefined ? {} : { "content-length": Buffer.byteLength(init.body) })
          },
          body: init.body,
          signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)])
        })
        const text = (await readReply(response, REPLY_LIMITS.carrierJson)).toString("utf8")
        let body: Record<string, any> = {}
        try {
          body = text ? JSON.parse(text) : {}
        } catch {
          body = {}
        }
        return { status: response.statusCode ?? 0, body }
      },
      catch: (error) => new CarrierUnavailable({ message: `${provider} request failed: ${(error as Error).message}` })
    }))
