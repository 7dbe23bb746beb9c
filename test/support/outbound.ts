import { Either, Layer } from "effect"
import { makeOutboundHttp } from "../../layers/outbound/outboundHttp.ts"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { parseOutboundAllow } from "../../src/outbound/outboundPolicy.ts"

/** The outbound client under a given `TALKGRAPH_OUTBOUND_ALLOW` value, for tests of one provider client. */
export const outboundAllowing = (allow: string) =>
  Layer.scoped(OutboundHttp, makeOutboundHttp(Either.getOrThrow(parseOutboundAllow(allow))))

/** What the suite's stand-ins need: every one of them listens on 127.0.0.1. */
export const LoopbackOutbound = outboundAllowing("loopback")
