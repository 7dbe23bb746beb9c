import type { HttpClient } from "@effect/platform"
import { Context, type Effect, type Option } from "effect"
import type * as http from "node:http"
import type { OutboundKind } from "../src/outbound/outboundPolicy.ts"

/** The outbound policy refused the address a request would have gone to; `message` says which and why (for the log). */
export class OutboundBlocked extends Error {
  readonly code = "ERR_OUTBOUND_BLOCKED"
}

export interface OutboundRequest {
  readonly url: URL
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly headers: Readonly<Record<string, string | number>>
  readonly body?: string | Uint8Array | undefined
  readonly signal?: AbortSignal | undefined
  /**
   * Send once more, on a fresh connection, when a kept-alive one turns out to have been closed by
   * the provider before anything was answered (Node's documented remedy). Only for requests that
   * do no harm when repeated.
   */
  readonly resendOnStaleConnection?: boolean | undefined
}

/**
 * Every request to an organization's providers (LLM, STT, TTS, carrier REST) leaves through here,
 * under the outbound policy (`TALKGRAPH_OUTBOUND_ALLOW`): the address is checked when the base URL
 * is saved and again at every connection, after the name is resolved, so a name that later
 * resolves elsewhere (DNS rebinding) is refused too. Redirects are never followed.
 */
export interface OutboundHttpShape {
  /** Why `url` cannot be a `kind` base URL (its form, or an address the policy refuses), for a 422 when it is saved. */
  readonly refusal: (kind: OutboundKind, url: string) => Effect.Effect<Option.Option<string>>
  /**
   * Sends one request; answers the reply's head. Its body is read with `readReply`, which bounds
   * it. Fails with `OutboundBlocked` when the policy refuses the address, else with the network's error.
   */
  readonly send: (kind: OutboundKind, request: OutboundRequest) => Promise<http.IncomingMessage>
  /**
   * Effect's HttpClient under the same policy, for requests answered as a whole or streamed by
   * Effect: no redirects, the scheme and a literal address checked before sending, the resolved
   * address at connecting. Read bodies with `readBoundedReply`.
   */
  readonly client: (kind: OutboundKind) => HttpClient.HttpClient
  /** For clients that open their own connections (WebSockets): why `url`'s literal address is refused, if it is. */
  readonly literalRefusal: (kind: OutboundKind, url: URL) => OutboundBlocked | null
  /** Kept-alive agents whose connections are checked against the policy after the name is resolved. */
  readonly agent: (kind: OutboundKind, secure: boolean) => http.Agent
}

export class OutboundHttp extends Context.Tag("talkgraph/OutboundHttp")<OutboundHttp, OutboundHttpShape>() {}
