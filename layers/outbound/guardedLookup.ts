import * as dns from "node:dns"
import type * as net from "node:net"
import { OutboundBlocked } from "../../services/OutboundHttp.ts"
import { addressRefusal, type OutboundKind, type OutboundPolicy } from "../../src/outbound/outboundPolicy.ts"

/**
 * A `lookup` for sockets: resolves the name as usual, then refuses the connection when any
 * address it resolved to is one the policy does not allow for `kind`. Checking the answer the
 * connection will use (not an earlier one) is what defeats DNS rebinding.
 */
export const guardedLookup =
  (policy: OutboundPolicy, kind: OutboundKind): net.LookupFunction => (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0)
      for (const { address } of addresses) {
        const refusal = addressRefusal(policy, kind, address)
        if (refusal !== null) return callback(new OutboundBlocked(`${hostname} resolves to ${refusal}`), "", 0)
      }
      if (options.all) {
        return (callback as unknown as (error: null, addresses: Array<dns.LookupAddress>) => void)(null, addresses)
      }
      const first = addresses[0]
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0)
      callback(null, first.address, first.family)
    })
  }
