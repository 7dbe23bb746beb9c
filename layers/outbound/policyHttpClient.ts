import { Headers, HttpClient, HttpClientError, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect } from "effect"
import type * as http from "node:http"
import type * as https from "node:https"
import { OutboundBlocked } from "../../services/OutboundHttp.ts"

/**
 * Header names that carry a provider's key besides the ones Effect already hides from spans
 * (`authorization`, `x-api-key`, cookies): ElevenLabs takes its key in `xi-api-key`.
 */
const SECRET_HEADERS = ["xi-api-key"]

/**
 * Effect's HttpClient over node's `http`, on the kept-alive agents whose `lookup` holds every
 * connection to the policy, so a name that resolves inside is refused when connecting. What the
 * agents cannot see is checked before sending: the scheme, and an IP literal (which skips lookup).
 * node's client never follows a redirect, and nothing here asks it to. No trace context leaves
 * for a provider, and a key in a header stays out of the request's span.
 */
export const policyHttpClient = (
  agents: { readonly http: http.Agent; readonly https: https.Agent },
  literalRefusal: (url: URL) => OutboundBlocked | null,
  userAgent: string
): HttpClient.HttpClient =>
  NodeHttpClient.make.pipe(
    Effect.provideService(NodeHttpClient.HttpAgent, {
      [NodeHttpClient.HttpAgentTypeId]: NodeHttpClient.HttpAgentTypeId,
      ...agents
    }),
    Effect.runSync,
    HttpClient.mapRequestEffect((request) => {
      const url = new URL(request.url)
      const blocked = url.protocol !== "http:" && url.protocol !== "https:"
        ? new OutboundBlocked(`${url.protocol} is not http(s)`)
        : literalRefusal(url)
      if (blocked) {
        return Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", cause: blocked }))
      }
      return Effect.succeed(
        request.headers["user-agent"] === undefined
          ? HttpClientRequest.setHeader(request, "user-agent", userAgent)
          : request
      )
    }),
    HttpClient.withTracerPropagation(false),
    HttpClient.transform((effect) =>
      Effect.locallyWith(effect, Headers.currentRedactedNames, (names) => [...names, ...SECRET_HEADERS])
    )
  )

/** What went wrong in a request, for the operator's log: the network's or the policy's own words. */
export const requestFailureText = (error: unknown): string => {
  if (HttpClientError.isHttpClientError(error) && error.cause instanceof Error) return error.cause.message
  return error instanceof Error ? error.message : String(error)
}

/** The network's error code behind a failed request (`ECONNREFUSED`, `ERR_OUTBOUND_BLOCKED`), if it named one. */
export const requestFailureCode = (error: unknown): string | undefined => {
  const cause = HttpClientError.isHttpClientError(error) ? error.cause : error
  const code = (cause as { code?: unknown; cause?: { code?: unknown } } | null)?.code ??
    (cause as { cause?: { code?: unknown } } | null)?.cause?.code
  return typeof code === "string" ? code : undefined
}
