import { Config, ConfigError, Either } from "effect"
import * as net from "node:net"
import { classifyAddress } from "./addressRanges.ts"

/**
 * Who a request goes to: an organization's model endpoints (LLM, STT, TTS), its carrier's REST
 * API, its webhook receivers, or the HTTP APIs its agents' tools call.
 */
export type OutboundKind = "model" | "carrier" | "webhook" | "tool"

export const OUTBOUND_KINDS: ReadonlyArray<OutboundKind> = ["model", "carrier", "webhook", "tool"]

const KIND_PREFIX: Readonly<Record<string, OutboundKind>> = {
  "models:": "model",
  "carriers:": "carrier",
  "webhooks:": "webhook",
  "tools:": "tool"
}

type Target =
  | { readonly _tag: "Class"; readonly class: "loopback" | "private" }
  | { readonly _tag: "Subnet"; readonly list: net.BlockList }

interface Allowance {
  readonly kinds: ReadonlyArray<OutboundKind>
  readonly target: Target
}

/** Which internal addresses each kind of endpoint may reach; public ones always may, `never` ones never. */
export interface OutboundPolicy {
  readonly allowances: ReadonlyArray<Allowance>
}

export const OUTBOUND_ALLOW = "TALKGRAPH_OUTBOUND_ALLOW"

/**
 * Without the setting: a self-hosted service (sign-up closed) reaches models on this machine or
 * its network (Ollama, vLLM, a local Whisper), as the README's examples do; carriers are public
 * services, so their endpoints never need an internal address, and tools' APIs reach only public
 * addresses unless the operator allows more (`tools:private`). A service open to sign-ups serves
 * strangers, so nothing internal is reachable unless the operator says so.
 */
export const defaultOutboundAllow = (signupOpen: boolean) => (signupOpen ? "none" : "models:loopback,models:private")

const subnet = (text: string): Target | null => {
  const [address, bits, ...rest] = text.split("/")
  if (address === undefined || bits === undefined || rest.length > 0 || !/^\d{1,3}$/.test(bits)) return null
  const family = net.isIP(address)
  const prefix = Number(bits)
  if (family === 0 || prefix > (family === 4 ? 32 : 128)) return null
  const type = family === 4 ? "ipv4" : "ipv6"
  const list = new net.BlockList()
  list.addSubnet(address, prefix, type)
  return { _tag: "Subnet", list }
}

/**
 * Reads the setting: comma-separated entries, each `loopback`, `private` or a CIDR range
 * (`10.20.0.0/16`, `fd12::/64`), optionally for one kind only (`models:…`, `carriers:…`, `tools:…`); or
 * `none`.
 */
export const parseOutboundAllow = (text: string): Either.Either<OutboundPolicy, string> => {
  const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
  if (entries.length === 1 && entries[0] === "none") return Either.right({ allowances: [] })
  const allowances: Array<Allowance> = []
  for (const entry of entries) {
    const prefix = Object.keys(KIND_PREFIX).find((candidate) => entry.startsWith(candidate))
    const kinds: ReadonlyArray<OutboundKind> = prefix ? [KIND_PREFIX[prefix]!] : OUTBOUND_KINDS
    const body = prefix ? entry.slice(prefix.length) : entry
    const target: Target | null = body === "loopback" || body === "private"
      ? { _tag: "Class", class: body }
      : subnet(body)
    if (target === null) {
      return Either.left(
        `"${entry}" is not an entry: use none, or a comma-separated list of loopback, private or CIDR ranges (10.0.0.0/8), each optionally prefixed with models:, carriers:, webhooks: or tools:`
      )
    }
    allowances.push({ kinds, target })
  }
  return Either.right({ allowances })
}

const covers = (target: Target, address: string, addressClass: "loopback" | "private") => {
  if (target._tag === "Class") return target.class === addressClass
  const family = net.isIP(address)
  // BlockList matches an IPv4-mapped IPv6 address against IPv4 ranges too.
  return family !== 0 && target.list.check(address, family === 4 ? "ipv4" : "ipv6")
}

const endpointsOf = (kind: OutboundKind) =>
  kind === "model"
    ? "model (LLM, STT, TTS) endpoints"
    : kind === "carrier"
    ? "carrier endpoints"
    : kind === "webhook"
    ? "webhook endpoints"
    : "tool endpoints"

/**
 * Whether a request of `kind` may go to `address`: null when it may, else why not (for the
 * operator's log and for a 422 when a base URL is saved).
 */
export const addressRefusal = (policy: OutboundPolicy, kind: OutboundKind, address: string): string | null => {
  const classified = classifyAddress(address)
  if (classified === null) return `${address} is not an IP address`
  switch (classified.class) {
    case "public":
      return null
    case "never":
      return `${address} is ${classified.description}; talkgraph never sends requests there`
    default: {
      const addressClass = classified.class
      const allowed = policy.allowances.some((allowance) =>
        allowance.kinds.includes(kind) && covers(allowance.target, address.replace(/^\[|\]$/g, ""), addressClass)
      )
      return allowed
        ? null
        : `${address} is ${classified.description}, which ${OUTBOUND_ALLOW} does not allow for ${endpointsOf(kind)}`
    }
  }
}

/** The policy from the environment; a bad value stops the start, naming the variable. */
export const outboundPolicyConfig: Config.Config<OutboundPolicy> = Config.all({
  allow: Config.string(OUTBOUND_ALLOW).pipe(Config.option),
  signupOpen: Config.boolean("TALKGRAPH_SIGNUP").pipe(Config.withDefault(false))
}).pipe(
  Config.mapOrFail(({ allow, signupOpen }) =>
    Either.mapLeft(
      parseOutboundAllow(allow._tag === "Some" ? allow.value : defaultOutboundAllow(signupOpen)),
      (message) => ConfigError.InvalidData([OUTBOUND_ALLOW], message)
    )
  )
)
