import * as crypto from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"

/**
 * Signature Version 4 as S3 checks it, for the S3 stand-in: s3rver does not check v4 signatures at
 * all, so a presigned URL with a changed key, a changed signed header or a passed expiry would
 * work against it and fail against S3. Follows "Signature Version 4 signing process" of the S3 API
 * reference (canonical request, string to sign, derived signing key), query and header forms.
 */
type SignatureVerdict =
  | { readonly ok: true }
  | {
    readonly ok: false
    readonly code: "AccessDenied" | "InvalidAccessKeyId" | "SignatureDoesNotMatch"
    readonly message: string
  }

const hmac = (key: crypto.BinaryLike, data: string) => crypto.createHmac("sha256", key).update(data).digest()
const sha256Hex = (data: string) => crypto.createHash("sha256").update(data).digest("hex")

/** RFC 3986 encoding, as SigV4 asks: everything but unreserved characters. */
const encode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

const parseQuery = (raw: string): Array<[string, string]> =>
  raw === ""
    ? []
    : raw.split("&").map((pair) => {
      const at = pair.indexOf("=")
      const key = at < 0 ? pair : pair.slice(0, at)
      const value = at < 0 ? "" : pair.slice(at + 1)
      return [decodeURIComponent(key), decodeURIComponent(value)]
    })

const amzDateMs = (value: string) => {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value)
  return match ? Date.UTC(+match[1]!, +match[2]! - 1, +match[3]!, +match[4]!, +match[5]!, +match[6]!) : Number.NaN
}

const denied = (message: string): SignatureVerdict => ({ ok: false, code: "AccessDenied", message })
const mismatch: SignatureVerdict = {
  ok: false,
  code: "SignatureDoesNotMatch",
  message:
    "The request signature we calculated does not match the signature you provided. Check your key and signing method."
}

export const verifySignatureV4 = (
  request: { readonly method: string; readonly url: string; readonly headers: IncomingHttpHeaders },
  secrets: ReadonlyMap<string, string>,
  nowMs: number
): SignatureVerdict => {
  const at = request.url.indexOf("?")
  const rawPath = at < 0 ? request.url : request.url.slice(0, at)
  const query = parseQuery(at < 0 ? "" : request.url.slice(at + 1))
  const param = (name: string) => query.find(([key]) => key === name)?.[1]
  const authorization = request.headers.authorization

  let credential: string, signedHeaders: string, signature: string, amzDate: string, payloadHash: string
  if (param("X-Amz-Signature") !== undefined) {
    if (param("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256") return denied("Only AWS4-HMAC-SHA256 is supported")
    credential = param("X-Amz-Credential") ?? ""
    signedHeaders = param("X-Amz-SignedHeaders") ?? ""
    signature = param("X-Amz-Signature")!
    amzDate = param("X-Amz-Date") ?? ""
    payloadHash = param("X-Amz-Content-Sha256") ?? "UNSIGNED-PAYLOAD"
    const expires = Number(param("X-Amz-Expires"))
    if (!Number.isInteger(expires) || expires < 1 || expires > 604800) {
      return denied("X-Amz-Expires must be between 1 and 604800 seconds")
    }
    if (!(nowMs <= amzDateMs(amzDate) + expires * 1000)) return denied("Request has expired")
  } else if (authorization?.startsWith("AWS4-HMAC-SHA256 ")) {
    const parts = Object.fromEntries(
      authorization.slice("AWS4-HMAC-SHA256 ".length).split(",").map((part) => {
        const [key, ...value] = part.trim().split("=")
        return [key, value.join("=")]
      })
    )
    credential = parts["Credential"] ?? ""
    signedHeaders = parts["SignedHeaders"] ?? ""
    signature = parts["Signature"] ?? ""
    amzDate = String(request.headers["x-amz-date"] ?? "")
    payloadHash = String(request.headers["x-amz-content-sha256"] ?? "")
  } else {
    return denied("Access Denied")
  }

  const [accessKeyId, date, region, service, terminal] = credential.split("/")
  const secret = accessKeyId === undefined ? undefined : secrets.get(accessKeyId)
  if (secret === undefined) {
    return {
      ok: false,
      code: "InvalidAccessKeyId",
      message: "The AWS Access Key Id you provided does not exist in our records."
    }
  }
  if (service !== "s3" || terminal !== "aws4_request" || date !== amzDate.slice(0, 8)) return mismatch

  const names = signedHeaders.split(";")
  if (!names.includes("host")) return mismatch
  const headerValue = (name: string) => {
    const value = request.headers[name]
    return (Array.isArray(value) ? value.join(",") : value ?? "").trim().replace(/\s+/g, " ")
  }
  const canonicalRequest = [
    request.method,
    rawPath.split("/").map((segment) => encode(decodeURIComponent(segment))).join("/"),
    query
      .filter(([key]) => key !== "X-Amz-Signature")
      .map(([key, value]) => [encode(key), encode(value)] as const)
      .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
      .map(([key, value]) => `${key}=${value}`)
      .join("&"),
    names.map((name) => `${name}:${headerValue(name)}\n`).join(""),
    signedHeaders,
    payloadHash
  ].join("\n")
  const scope = `${date}/${region}/s3/aws4_request`
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonicalRequest)].join("\n")
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date!), region!), "s3"), "aws4_request")
  const expected = hmac(key, stringToSign).toString("hex")
  const given = Buffer.from(signature)
  return given.length === expected.length && crypto.timingSafeEqual(given, Buffer.from(expected))
    ? { ok: true }
    : mismatch
}

export const s3ErrorXml = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`
