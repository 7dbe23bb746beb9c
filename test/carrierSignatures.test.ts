import { it as effectIt } from "@effect/vitest"
import { Clock, Effect, Option, TestClock } from "effect"
import * as crypto from "node:crypto"
import plivo from "plivo"
import { describe, expect, it } from "vitest"
import { plivoAdapter } from "../layers/telephony/carriers/plivo.ts"
import { telnyxAdapter } from "../layers/telephony/carriers/telnyx.ts"
import { vonageAdapter } from "../layers/telephony/carriers/vonage.ts"
import type { CarrierAccount } from "../services/Telephony.ts"
import { isValidMediaToken, mediaToken } from "../src/telephony/mediaToken.ts"
import { plivoSignature, plivoSigningString } from "../src/telephony/plivoSignature.ts"
import { vonageWebhookToken } from "../src/telephony/vonageJwt.ts"

const account = (provider: CarrierAccount["provider"], credentials: Record<string, string>): CarrierAccount => ({
  configurationId: 1,
  provider,
  apiBaseUrl: null,
  credentials,
  machineDetection: false
})
const now = () => Math.floor(Date.now() / 1000)

describe("carrier webhook signatures", () => {
  it("Telnyx: accepts an Ed25519 signature over timestamp|body, refuses altered bodies, other keys and stale timestamps", () => {
    const { publicKey, privateKey } = crypto.generateKeyPairSync("ed25519")
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("base64")
    const body = JSON.stringify({
      data: { event_type: "call.hangup", payload: { call_control_id: "v3:abc", hangup_cause: "user_busy" } }
    })
    const signed = (timestamp: number, text = body) => ({
      url: "https://talkgraph.test/api/v1/telephony/telnyx/status/1",
      headers: {
        "telnyx-timestamp": String(timestamp),
        "telnyx-signature-ed25519": crypto.sign(null, Buffer.from(`${timestamp}|${text}`), privateKey).toString(
          "base64"
        )
      },
      rawBody: text
    })
    const telnyx = account("telnyx", { api_key: "k", webhook_public_key: raw })
    expect(Effect.runSync(telnyxAdapter.verifyWebhook(telnyx, signed(now())))).toBe(true)
    expect(
      Effect.runSync(
        telnyxAdapter.verifyWebhook(telnyx, { ...signed(now()), rawBody: body.replace("user_busy", "normal_clearing") })
      )
    ).toBe(false)
    expect(Effect.runSync(telnyxAdapter.verifyWebhook(telnyx, signed(now() - 3600)))).toBe(false)
    const other = crypto.generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(12)
      .toString("base64")
    expect(
      Effect.runSync(
        telnyxAdapter.verifyWebhook(account("telnyx", { api_key: "k", webhook_public_key: other }), signed(now()))
      )
    )
      .toBe(false)
    expect(Option.getOrThrow(telnyxAdapter.parseStatusCallback(signed(now())))).toMatchObject({
      providerCallId: "v3:abc",
      outcome: "busy"
    })
  })

  it("Vonage: accepts an HS256 JWT whose payload hash matches the body, refuses a swapped body or another secret", () => {
    const body = JSON.stringify({ uuid: "call-1", status: "completed", duration: "12" })
    const request = (secret: string, text = body) => ({
      url: "https://talkgraph.test/api/v1/telephony/vonage/status/1",
      headers: { authorization: `Bearer ${vonageWebhookToken(secret, body, now())}` },
      rawBody: text
    })
    const vonage = account("vonage", {
      api_key: "k",
      api_secret: "s",
      application_id: "a",
      private_key: "p",
      signature_secret: "shh"
    })
    expect(Effect.runSync(vonageAdapter.verifyWebhook(vonage, request("shh")))).toBe(true)
    expect(Effect.runSync(vonageAdapter.verifyWebhook(vonage, request("shh", body.replace("completed", "busy"))))).toBe(
      false
    )
    expect(Effect.runSync(vonageAdapter.verifyWebhook(vonage, request("other")))).toBe(false)
    expect(
      Effect.runSync(vonageAdapter.verifyWebhook(
        { ...vonage, credentials: { ...vonage.credentials, signature_secret: "" } },
        request("shh")
      ))
    ).toBe(false)
    expect(Option.getOrThrow(vonageAdapter.parseStatusCallback(request("shh")))).toMatchObject({
      outcome: "completed",
      durationSeconds: 12
    })
  })

  it("Vonage: refuses a correctly signed JWT without iat, with an iat out of the five-minute window, or past its exp", () => {
    const body = JSON.stringify({ uuid: "call-1", status: "completed" })
    const hash = crypto.createHash("sha256").update(body).digest("hex")
    const token = (claims: Record<string, unknown>) => {
      const signingInput = `${Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url")}.${
        Buffer.from(JSON.stringify(claims)).toString("base64url")
      }`
      return `${signingInput}.${crypto.createHmac("sha256", "shh").update(signingInput).digest("base64url")}`
    }
    const vonage = account("vonage", { application_id: "a", private_key: "p", signature_secret: "shh" })
    const verify = (claims: Record<string, unknown>) =>
      Effect.runSync(vonageAdapter.verifyWebhook(vonage, {
        url: "https://talkgraph.test/api/v1/telephony/vonage/status/1",
        headers: { authorization: `Bearer ${token(claims)}` },
        rawBody: body
      }))
    expect(verify({ iat: now(), jti: "j1", payload_hash: hash })).toBe(true)
    expect(verify({ jti: "j2", payload_hash: hash })).toBe(false)
    expect(verify({ iat: String(now()), jti: "j3", payload_hash: hash })).toBe(false)
    expect(verify({ iat: now() - 600, jti: "j4", payload_hash: hash })).toBe(false)
    expect(verify({ iat: now() + 600, jti: "j5", payload_hash: hash })).toBe(false)
    expect(verify({ iat: now() - 10, exp: now() - 1, jti: "j6", payload_hash: hash })).toBe(false)
  })

  it("Vonage: accepts a signed GET answer webhook, whose payload hash is of its query fields as compact JSON, and refuses an altered query", () => {
    const fields = { to: "447700900000", from: "447700900001", uuid: "call-1", conversation_uuid: "CON-1" }
    const hash = crypto.createHash("sha256").update(JSON.stringify(fields)).digest("hex")
    const signingInput = `${Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url")}.${
      Buffer.from(JSON.stringify({ iat: now(), jti: "g1", payload_hash: hash })).toString("base64url")
    }`
    const authorization = `Bearer ${signingInput}.${
      crypto.createHmac("sha256", "shh").update(signingInput).digest("base64url")
    }`
    const vonage = account("vonage", { application_id: "a", private_key: "p", signature_secret: "shh" })
    const answer = (query: Record<string, string>) => ({
      url: `https://talkgraph.test/api/v1/telephony/vonage/inbound/3?${new URLSearchParams(query)}`,
      headers: { authorization },
      rawBody: ""
    })
    expect(Effect.runSync(vonageAdapter.verifyWebhook(vonage, answer(fields)))).toBe(true)
    expect(Effect.runSync(vonageAdapter.verifyWebhook(vonage, answer({ ...fields, from: "447700900002" })))).toBe(false)
    expect(Option.getOrThrow(vonageAdapter.parseIncomingCall(answer(fields)))).toEqual({
      providerCallId: "call-1",
      from: "447700900001",
      to: "447700900000"
    })
  })

  it("Plivo: builds the V3 signing string as the SDK does and checks the HMAC with its nonce", () => {
    const form = new URLSearchParams({ CallUUID: "c-1", RequestUUID: "r-1", CallStatus: "busy" })
    const url = "https://talkgraph.test/api/v1/telephony/plivo/status/7?x=1"
    // Each field's name and value with nothing between them: the SDK's get_sorted_params_string.
    expect(plivoSigningString(url, form)).toBe(
      "https://talkgraph.test/api/v1/telephony/plivo/status/7?x=1.CallStatusbusyCallUUIDc-1RequestUUIDr-1"
    )
    for (const target of [url, "https://talkgraph.test/api/v1/telephony/plivo/status/7"]) {
      expect(
        plivo.validateV3Signature(
          "POST",
          target,
          "n0nce",
          "token",
          plivoSignature("token", target, form, "n0nce"),
          Object.fromEntries(form)
        )
      ).toBe(true)
    }
    const plivoAccount = account("plivo", { auth_id: "MA1", auth_token: "token" })
    const request = (token: string, nonce = "n0nce") => ({
      url,
      headers: {
        "x-plivo-signature-v3": `other,${plivoSignature(token, url, form, nonce)}`,
        "x-plivo-signature-v3-nonce": nonce
      },
      rawBody: form.toString()
    })
    expect(Effect.runSync(plivoAdapter.verifyWebhook(plivoAccount, request("token")))).toBe(true)
    expect(Effect.runSync(plivoAdapter.verifyWebhook(plivoAccount, request("wrong")))).toBe(false)
    expect(
      Effect.runSync(plivoAdapter.verifyWebhook(plivoAccount, {
        ...request("token"),
        rawBody: form.toString().replace("busy", "completed")
      }))
    ).toBe(false)
    expect(Option.getOrThrow(plivoAdapter.parseStatusCallback(request("token")))).toMatchObject({
      providerCallId: "r-1",
      outcome: "busy"
    })
    // As Plivo documents its answer and hangup requests for an API call: the placement's request_uuid as ALegRequestUUID.
    const documented = new URLSearchParams({
      CallUUID: "c-2",
      ALegUUID: "c-2",
      ALegRequestUUID: "r-2",
      CallStatus: "completed",
      Direction: "outbound"
    })
    expect(Option.getOrThrow(plivoAdapter.parseStatusCallback({ url, headers: {}, rawBody: documented.toString() })))
      .toMatchObject({ providerCallId: "r-2", outcome: "completed" })
  })

  it("media-stream tokens are bound to their run and expire", () => {
    const key = crypto.randomBytes(32)
    const sign = (purpose: string, message: string) =>
      crypto.createHmac("sha256", key).update(`${purpose}:${message}`).digest("base64url")
    const verify = (purpose: string, message: string, signature: string) => sign(purpose, message) === signature
    const token = mediaToken(sign, 42, 1_000)
    expect(isValidMediaToken(verify, 42, token, 999)).toBe(true)
    expect(isValidMediaToken(verify, 43, token, 999)).toBe(false)
    expect(isValidMediaToken(verify, 42, token, 1_001)).toBe(false)
    expect(isValidMediaToken(verify, 42, "1000.forged", 999)).toBe(false)
  })
})

describe("carrier webhook signatures on the service's clock", () => {
  const body = JSON.stringify({ uuid: "call-1", status: "completed" })

  // The clock starts at 1970 under TestClock: a wall-clock check would find these signatures decades old.
  effectIt.effect(
    "Vonage: a webhook JWT holds for five minutes after its iat by Clock and is refused after",
    () =>
      Effect.gen(function*() {
        const vonage = account("vonage", { application_id: "a", private_key: "p", signature_secret: "shh" })
        const signedAt = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const request = {
          url: "https://talkgraph.test/api/v1/telephony/vonage/status/1",
          headers: { authorization: `Bearer ${vonageWebhookToken("shh", body, signedAt)}` },
          rawBody: body
        }
        expect(yield* vonageAdapter.verifyWebhook(vonage, request)).toBe(true)
        yield* TestClock.adjust("4 minutes")
        expect(yield* vonageAdapter.verifyWebhook(vonage, request)).toBe(true)
        yield* TestClock.adjust("2 minutes")
        expect(yield* vonageAdapter.verifyWebhook(vonage, request)).toBe(false)
      })
  )

  effectIt.effect(
    "Telnyx: a signature's timestamp is checked against Clock, refused once it is stale",
    () =>
      Effect.gen(function*() {
        const { publicKey, privateKey } = crypto.generateKeyPairSync("ed25519")
        const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("base64")
        const telnyx = account("telnyx", { api_key: "k", webhook_public_key: raw })
        const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const request = {
          url: "https://talkgraph.test/api/v1/telephony/telnyx/status/1",
          headers: {
            "telnyx-timestamp": String(timestamp),
            "telnyx-signature-ed25519": crypto.sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString(
              "base64"
            )
          },
          rawBody: body
        }
        expect(yield* telnyxAdapter.verifyWebhook(telnyx, request)).toBe(true)
        yield* TestClock.adjust("1 hour")
        expect(yield* telnyxAdapter.verifyWebhook(telnyx, request)).toBe(false)
      })
  )
})
