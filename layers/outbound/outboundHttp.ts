import { Duration, Effect, Layer, Option } from "effect"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import { InvalidConfiguration } from "../../services/AppConfig.ts"
import { OutboundBlocked, OutboundHttp, type OutboundRequest } from "../../services/OutboundHttp.ts"
import { baseUrlProblem } from "../../src/outbound/baseUrls.ts"
import {
  addressRefusal,
  OUTBOUND_KINDS,
  type OutboundKind,
  type OutboundPolicy,
  outboundPolicyConfig
} from "../../src/outbound/outboundPolicy.ts"
import { serviceVersion } from "../../src/version.ts"
import { IDLE_SOCKET_MS, reuseOnlyFresh } from "./freshSockets.ts"
import { guardedLookup } from "./guardedLookup.ts"
import { policyHttpClient } from "./policyHttpClient.ts"

/** How long saving a base URL waits for its name to resolve; without an answer the connection-time check decides. */
const SAVE_LOOKUP_TIMEOUT = Duration.seconds(2)

const KINDS: ReadonlyArray<OutboundKind> = OUTBOUND_KINDS

const literalHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, "")

/** The outbound policy at work over node's HTTP client, with kept-alive agents per kind of endpoint. */
export const makeOutboundHttp = (policy: OutboundPolicy) =>
  Effect.gen(function*() {
    const agents = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Map(KINDS.map((kind) => {
          const lookup = guardedLookup(policy, kind)
          return [kind, {
            http: reuseOnlyFresh(new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, lookup })),
            https: reuseOnlyFresh(new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, lookup }))
          }] as const
        }))
      ),
      (agents) =>
        Effect.sync(() => {
          for (const pair of agents.values()) {
            pair.http.destroy()
            pair.https.destroy()
          }
        })
    )
    const userAgent = `talkgraph/${serviceVersion}`

    const agent = (kind: OutboundKind, secure: boolean): http.Agent => {
      const pair = agents.get(kind)!
      return secure ? pair.https : pair.http
    }

    // An IP literal never goes through `lookup`, so it is checked here.
    const literalRefusal = (kind: OutboundKind, url: URL): OutboundBlocked | null => {
      const host = literalHost(url)
      if (net.isIP(host) === 0) return null
      const refusal = addressRefusal(policy, kind, host)
      return refusal === null ? null : new OutboundBlocked(refusal)
    }

    const send = (kind: OutboundKind, request: OutboundRequest): Promise<http.IncomingMessage> =>
      new Promise((resolve, reject) => {
        if (request.url.protocol !== "http:" && request.url.protocol !== "https:") {
          return reject(new OutboundBlocked(`${request.url.protocol} is not http(s)`))
        }
        const blocked = literalRefusal(kind, request.url)
        if (blocked) return reject(blocked)
        const secure = request.url.protocol === "https:"
        const headers = { "user-agent": userAgent, ...request.headers }
        const attempt = (retried: boolean) => {
          let answered = false
          const outgoing = (secure ? https : http).request(request.url, {
            method: request.method,
            headers,
            agent: agent(kind, secure),
            ...(request.signal ? { signal: request.signal } : {})
          }, (response) => {
            answered = true
            resolve(response)
          })
          // Kept even after the answer: an error with no listener would end the process.
          outgoing.on("error", (error: NodeJS.ErrnoException) => {
            if (
              request.resendOnStaleConnection && !retried && !answered && outgoing.reusedSocket &&
              error.code === "ECONNRESET" &&
              !request.signal?.aborted
            ) {
              return attempt(true)
            }
            if (!answered) reject(error)
          })
          outgoing.end(request.body)
        }
        attempt(false)
      })

    const resolvedRefusal = (kind: OutboundKind, host: string) =>
      Effect.async<Option.Option<string>>((resume) => {
        dns.lookup(host, { all: true }, (error, addresses) => {
          if (error) return resume(Effect.succeed(Option.none()))
          const refused = addresses.map(({ address }) => addressRefusal(policy, kind, address)).find((reason) =>
            reason !== null
          )
          resume(Effect.succeed(refused ? Option.some(`${host} resolves to ${refused}`) : Option.none()))
        })
      }).pipe(Effect.timeoutTo({
        duration: SAVE_LOOKUP_TIMEOUT,
        onSuccess: (refusal) => refusal,
        onTimeout: () => Option.none<string>()
      }))

    const refusal = (kind: OutboundKind, value: string): Effect.Effect<Option.Option<string>> => {
      const problem = baseUrlProblem(value)
      if (problem !== null) return Effect.succeed(Option.some(problem))
      const url = new URL(value)
      const literal = literalRefusal(kind, url)
      if (literal) return Effect.succeed(Option.some(literal.message))
      return net.isIP(literalHost(url)) === 0 ? resolvedRefusal(kind, url.hostname) : Effect.succeed(Option.none())
    }

    const clients = new Map(KINDS.map((kind) => {
      const pair = agents.get(kind)!
      return [kind, policyHttpClient(pair, (url) => literalRefusal(kind, url), userAgent)] as const
    }))
    const client = (kind: OutboundKind) => clients.get(kind)!

    return OutboundHttp.of({ refusal, send, client, literalRefusal, agent })
  })

/** The outbound policy from `TALKGRAPH_OUTBOUND_ALLOW`; a bad value stops the start. */
export const OutboundHttpLive = Layer.scoped(
  OutboundHttp,
  outboundPolicyConfig.pipe(
    Effect.mapError((error) => new InvalidConfiguration({ message: `Invalid configuration: ${String(error)}` })),
    Effect.flatMap(makeOutboundHttp)
  )
)
