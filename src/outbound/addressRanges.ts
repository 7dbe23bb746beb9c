import * as net from "node:net"

/**
 * What an IP address is, as far as sending a request there goes:
 * - `never`: link-local, cloud metadata, unspecified, multicast, reserved — no provider lives there;
 * - `loopback` and `private`: this machine and internal networks, allowed only by the outbound policy;
 * - `public`: everything else.
 */
type AddressClass = "never" | "loopback" | "private" | "public"

interface Range {
  readonly subnet: string
  readonly prefix: number
  readonly name: string
}

const v4 = (subnet: string, prefix: number, name: string): Range & { readonly type: "ipv4" } => ({
  subnet,
  prefix,
  name,
  type: "ipv4"
})
const v6 = (subnet: string, prefix: number, name: string): Range & { readonly type: "ipv6" } => ({
  subnet,
  prefix,
  name,
  type: "ipv6"
})

/** Checked first: an address here is refused whatever the policy says (RFC 6890 and the clouds' metadata endpoints). */
const NEVER = [
  v4("0.0.0.0", 8, "an unspecified address (0.0.0.0/8)"),
  v4("169.254.0.0", 16, "a link-local address (169.254.0.0/16, where cloud metadata services answer)"),
  v4("100.100.100.200", 32, "a cloud metadata address (100.100.100.200)"),
  v4("192.0.0.0", 24, "an IETF protocol address (192.0.0.0/24)"),
  v4("192.0.2.0", 24, "a documentation address (192.0.2.0/24)"),
  v4("198.51.100.0", 24, "a documentation address (198.51.100.0/24)"),
  v4("203.0.113.0", 24, "a documentation address (203.0.113.0/24)"),
  v4("224.0.0.0", 4, "a multicast address (224.0.0.0/4)"),
  v4("240.0.0.0", 4, "a reserved address (240.0.0.0/4)"),
  v6("::", 128, "the unspecified address (::)"),
  v6("fe80::", 10, "a link-local address (fe80::/10)"),
  v6("fec0::", 10, "a site-local address (fec0::/10)"),
  v6("fd00:ec2::254", 128, "a cloud metadata address (fd00:ec2::254)"),
  v6("ff00::", 8, "a multicast address (ff00::/8)"),
  v6("2001:db8::", 32, "a documentation address (2001:db8::/32)")
]

const LOOPBACK = [v4("127.0.0.0", 8, "a loopback address (127.0.0.0/8)"), v6("::1", 128, "the loopback address (::1)")]

const PRIVATE = [
  v4("10.0.0.0", 8, "a private address (10.0.0.0/8)"),
  v4("172.16.0.0", 12, "a private address (172.16.0.0/12)"),
  v4("192.168.0.0", 16, "a private address (192.168.0.0/16)"),
  v4("100.64.0.0", 10, "a shared address (100.64.0.0/10, carrier-grade NAT)"),
  v4("198.18.0.0", 15, "a benchmarking address (198.18.0.0/15)"),
  v6("fc00::", 7, "a unique local address (fc00::/7)")
]

const compile = (ranges: ReadonlyArray<Range & { readonly type: "ipv4" | "ipv6" }>) =>
  ranges.map((range) => {
    const list = new net.BlockList()
    list.addSubnet(range.subnet, range.prefix, range.type)
    return { ...range, list }
  })

const never = compile(NEVER)
const loopback = compile(LOOPBACK)
const internal = compile(PRIVATE)

const rangeOf = (ranges: ReturnType<typeof compile>, address: string, type: "ipv4" | "ipv6") =>
  ranges.find((range) => range.type === type && range.list.check(address, type))

/**
 * The IPv4 address inside an IPv6 one that stands for it: mapped (`::ffff:a.b.c.d`), compatible
 * (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`). Each reaches the IPv4 host, so
 * each is judged by it.
 */
const embeddedIpv4 = (address: string): string | null => {
  const groups = expandIpv6(address)
  if (groups === null) return null
  const quad = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
  const zeroHead = groups.slice(0, 5).every((group) => group === 0)
  if (zeroHead && groups[5] === 0xffff) return quad(groups[6]!, groups[7]!)
  // `::` and `::1` are IPv6's own unspecified and loopback addresses.
  if (zeroHead && groups[5] === 0 && (groups[6] !== 0 || groups[7]! > 1)) return quad(groups[6]!, groups[7]!)
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) {
    return quad(groups[6]!, groups[7]!)
  }
  if (groups[0] === 0x2002) return quad(groups[1]!, groups[2]!)
  return null
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail included), or null. */
const expandIpv6 = (address: string): Array<number> | null => {
  if (net.isIPv6(address) === false) return null
  let text = address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.includes("::") ? text.split("::") as [string, string] : [text, undefined]
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)))
  const front = parse(head)
  const back = tail === undefined ? [] : parse(tail)
  const missing = 8 - front.length - back.length
  return [...front, ...Array<number>(tail === undefined ? 0 : missing).fill(0), ...back]
}

interface ClassifiedAddress {
  readonly class: AddressClass
  /** What the address is, in words, for messages: "a link-local address (169.254.0.0/16, …)". */
  readonly description: string
}

/** Classifies an IP address (v4 or v6); null for anything that is not one. */
export const classifyAddress = (raw: string): ClassifiedAddress | null => {
  const address = raw.replace(/^\[|\]$/g, "").replace(/%.*$/, "")
  const family = net.isIP(address)
  if (family === 0) return null
  const type = family === 4 ? "ipv4" : "ipv6"
  if (type === "ipv6") {
    const inner = embeddedIpv4(address)
    if (inner !== null) return classifyAddress(inner)
  }
  const refused = rangeOf(never, address, type)
  if (refused) return { class: "never", description: refused.name }
  const local = rangeOf(loopback, address, type)
  if (local) return { class: "loopback", description: local.name }
  const privateRange = rangeOf(internal, address, type)
  if (privateRange) return { class: "private", description: privateRange.name }
  return { class: "public", description: "a public address" }
}

/** A host name that is loopback by definition (RFC 6761 §6.3), whatever a resolver answers. */
export const isLoopbackName = (host: string): boolean => /^(.+\.)?localhost\.?$/i.test(host)
