import { HttpClientRequest } from "@effect/platform"
import { Duration, Effect, Option, Schema } from "effect"
import { OutboundHttp } from "../../../services/OutboundHttp.ts"
import { CarrierUnavailable } from "../../../services/Telephony.ts"
import { endpointUnder } from "../../../src/outbound/baseUrls.ts"
import { requestFailureText } from "../../outbound/policyHttpClient.ts"
import { readBoundedReply, REPLY_LIMITS } from "../../outbound/replyBody.ts"

const REQUEST_TIMEOUT = Duration.seconds(10)

export interface CarrierReply<A> {
  readonly status: number
  readonly body: A
}

/**
 * The reply's fields the adapter reads. Every field is optional: a refusal's body (or one that is
 * not JSON) decodes as the empty reply, and the adapter decides from the status and what is missing.
 */
export type CarrierReplySchema<A> = Schema.Schema<A, any>

/**
 * One REST call to a carrier at `path` (and `query`) under its API base, through the outbound client (policy,
 * no redirects) with the reply read within REPLY_LIMITS.carrierJson and decoded with `reply`. The
 * failure's message is for the operator's log only (it may name the network error).
 */
export const carrierRequest = <A>(
  provider: string,
  base: string,
  path: string,
  init: {
    readonly method: "GET" | "POST" | "PUT" | "DELETE"
    readonly headers: Record<string, string>
    readonly body?: string
    /** Query fields of the request itself; the base URL can never carry any. */
    readonly query?: Record<string, string>
  },
  reply: CarrierReplySchema<A>
): Effect.Effect<CarrierReply<A>, CarrierUnavailable, OutboundHttp> =>
  Effect.gen(function*() {
    const url = endpointUnder(base, path)
    if (url === null) {
      return yield* Effect.fail(new Error(`the API base URL ${base} has a query string, a fragment or credentials`))
    }
    if (init.query) url.search = new URLSearchParams(init.query).toString()
    const outbound = yield* OutboundHttp
    const request = HttpClientRequest.make(init.method)(url).pipe(
      HttpClientRequest.setHeaders(init.headers),
      (request) =>
        init.body === undefined
          ? request
          : HttpClientRequest.bodyText(request, init.body, init.headers["content-type"] ?? "text/plain")
    )
    const response = yield* outbound.client("carrier").execute(request)
    const text = (yield* readBoundedReply(response, REPLY_LIMITS.carrierJson)).toString("utf8")
    return { status: response.status, body: decodeReply(reply, text) }
  }).pipe(
    Effect.scoped,
    Effect.timeoutFail({ duration: REQUEST_TIMEOUT, onTimeout: () => new Error("the request timed out") }),
    Effect.mapError((error) =>
      new CarrierUnavailable({ message: `${provider} request failed: ${requestFailureText(error)}` })
    )
  )

interface ReplyDecoder<A> {
  readonly fromJson: (text: string) => Option.Option<A>
  readonly empty: (input: unknown) => A
}

/**
 * Each adapter's reply schema is compiled once: building `parseJson` around it for every reply
 * compiled a new parser per call placed (~0.1 ms of CPU each).
 */
const decoders = new WeakMap<object, ReplyDecoder<unknown>>()

const decoderFor = <A>(reply: CarrierReplySchema<A>): ReplyDecoder<A> => {
  const known = decoders.get(reply) as ReplyDecoder<A> | undefined
  if (known !== undefined) return known
  const made: ReplyDecoder<A> = {
    fromJson: Schema.decodeUnknownOption(Schema.parseJson(reply)),
    empty: Schema.decodeUnknownSync(reply)
  }
  decoders.set(reply, made)
  return made
}

const decodeReply = <A>(reply: CarrierReplySchema<A>, text: string): A => {
  const decoder = decoderFor(reply)
  return text === "" ? decoder.empty({}) : Option.getOrElse(decoder.fromJson(text), () => decoder.empty({}))
}

/**
 * A hang-up's reply: done when the carrier accepted it, or answered with one of `alreadyEnded` (its
 * way of saying the call is over, which is what a hang-up wants); anything else leaves the call to
 * reconciliation.
 */
export const hungUp = (provider: string, alreadyEnded: ReadonlyArray<number>) => (reply: CarrierReply<unknown>) =>
  (reply.status >= 200 && reply.status < 300) || alreadyEnded.includes(reply.status)
    ? Effect.void
    : Effect.fail(new CarrierUnavailable({ message: `${provider} did not hang up the call (HTTP ${reply.status})` }))
