import { verifySignature } from "@vonage/jwt"
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import plivo from "plivo"
import { TelnyxWebhook } from "telnyx/lib/webhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TelephonyLive } from "../layers/telephony/telephony.ts"
import { type CallStatus, type CarrierAccount, Telephony, type WebhookRequest } from "../services/Telephony.ts"
import { outcomeWithVerdict } from "../src/campaigns/machineVerdict.ts"
import { vonageApiToken } from "../src/telephony/vonageJwt.ts"
import {
  type CarrierProviderName,
  carrierProviders,
  type CarrierStandIn,
  startCarrierStandIn
} from "./support/carrierStandIns.ts"
import type { CallScript } from "./support/loopbackCarrier.ts"
import { LoopbackOutbound } from "./support/outbound.ts"

/** Receives the carrier's callbacks the way the product's webhook endpoints would, answering with the adapter's markup. */
const startReceiver = async () => {
  const received: Array<WebhookRequest & { readonly method: string }> = []
  let markup = { contentType: "text/plain", body: "" }
  const server = http.createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${request.url}`
      received.push({
        method: request.method ?? "POST",
        url,
        headers: request.headers as Record<string, string>,
        rawBody: body
      })
      if (request.url?.startsWith("/answer")) {
        response.writeHead(200, { "content-type": markup.contentType }).end(markup.body)
        return
      }
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    answerWith: (next: { contentType: string; body: string }) => (markup = next),
    close: () => server.close()
  }
}

// The carrier REST calls leave through the outbound client, kept for the whole file.
const runtime = ManagedRuntime.make(TelephonyLive.pipe(Layer.provide(LoopbackOutbound)))
const adapters = await runtime.runPromise(Telephony)
afterAll(() => runtime.dispose())

/** Per-number scripts, shared by every stand-in. */
const scripts = new Map<string, CallScript>()
const script = ({ to }: { readonly to: string }) =>
  scripts.get(to.replace(/^\+/, "")) ?? { outcome: "completed" as const }

const standIns = new Map<CarrierProviderName, CarrierStandIn>()
let receiver: Awaited<ReturnType<typeof startReceiver>>

beforeAll(async () => {
  receiver = await startReceiver()
  for (const provider of carrierProviders) standIns.set(provider, await startCarrierStandIn(provider, { script }))
})
afterAll(async () => {
  for (const standIn of standIns.values()) await standIn.close()
  receiver?.close()
})

/** The account a configuration pointing at the stand-in becomes, as the product decrypts it. */
const accountOf = (standIn: CarrierStandIn, machineDetection = false): CarrierAccount => {
  const { provider: _provider, api_base_url: _base, amd_enabled: _amd, ...credentials } = standIn.telephonyConfig({
    machineDetection
  })
  return {
    configurationId: 1,
    provider: standIn.provider,
    apiBaseUrl: standIn.url,
    credentials: credentials as Record<string, string>,
    machineDetection
  }
}

const waitFor = async <T>(check: () => T | undefined | false, timeoutMs = 5000): Promise<T> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error("timed out")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe.each(carrierProviders.map((provider, index) => ({ provider, index })))(
  "the $provider adapter against its loopback carrier",
  ({ provider, index }) => {
    let number = 0
    /** A fresh number for a test, scripted. */
    const numberFor = (plan: CallScript) => {
      const to = `1555${index}${String(++number).padStart(6, "0")}`
      scripts.set(to, plan)
      return `+${to}`
    }

    const place = (account: CarrierAccount, to: string, timeLimitSeconds = 300) => {
      const statusCallbackUrl = `${receiver.base}/status/${provider}/${to.slice(1)}`
      return Effect.runPromise(
        adapters.adapter(provider).placeCall(account, {
          to,
          from: "+15559990000",
          answerUrl: `${receiver.base}/answer/${provider}/${to.slice(1)}`,
          statusCallbackUrl,
          timeLimitSeconds,
          mediaStreamUrl: `wss://talkgraph.test/api/v1/telephony/${provider}/media/1/123.abc`
        })
      )
    }

    /** Every callback about the call to `to`, checked with the adapter as the product checks it. */
    const statusesOf = (account: CarrierAccount, to: string) =>
      receiver.received
        .filter((request) => request.url.includes(`/${provider}/${to.slice(1)}`))
        .map((request) => {
          expect(Effect.runSync(adapters.adapter(provider).verifyWebhook(account, request))).toBe(true)
          return adapters.adapter(provider).parseStatusCallback(request)
        })
        .filter(Option.isSome)
        .map((status) => status.value)

    beforeAll(() =>
      receiver.answerWith(
        adapters.adapter(provider).answerMarkup(`wss://talkgraph.test/api/v1/telephony/${provider}/media/1/123.abc`)
      )
    )

    it("places a call whose signed callbacks tell a machine's answer, and ends it only when the call completes", async () => {
      const account = accountOf(standIns.get(provider)!, true)
      const to = numberFor({ outcome: "voicemail", ringMs: 5, talkMs: 300 })
      const { providerCallId } = await place(account, to)
      const call = await waitFor(() =>
        standIns.get(provider)!.calls().find((candidate) => candidate.placementId === providerCallId)
      )
      expect(call).toMatchObject({ machineDetection: true })
      await waitFor(() => call.endedAt !== null && statusesOf(account, to).some((status) => status.outcome !== null))
      const statuses = statusesOf(account, to)
      expect(statuses.every((status) => status.providerCallId === providerCallId)).toBe(true)
      // One final status, the call's end; the verdict came with it (Twilio) or before it (the others).
      const finals = statuses.filter((status) => status.outcome !== null)
      expect(finals).toHaveLength(1)
      const verdict = statuses.find((status) => status.answeredBy !== undefined)?.answeredBy
      expect(verdict).toBe("machine")
      expect(outcomeWithVerdict(finals[0]!.outcome!, verdict)).toBe("voicemail")
      expect(standIns.get(provider)!.callbackFailures()).toEqual([])
    })

    it("hangs up a live call, and cancels one still ringing, by the ids its callbacks named", async () => {
      const standIn = standIns.get(provider)!
      const account = accountOf(standIn)
      const adapter = adapters.adapter(provider)
      const refOf = (to: string, providerCallId: string) => ({
        providerCallId,
        liveCallId: statusesOf(account, to).reduce<string | null>(
          (known, status: CallStatus) => status.liveCallId ?? known,
          null
        )
      })

      const talking = numberFor({ outcome: "completed", ringMs: 5, talkMs: 30_000 })
      const live = await place(account, talking)
      const liveCall = await waitFor(() =>
        standIn.calls().find((call) => call.placementId === live.providerCallId && call.status === "in-progress")
      )
      await waitFor(() => statusesOf(account, talking).some((status) => status.answered))
      expect((await Effect.runPromise(adapter.callStatus(account, refOf(talking, live.providerCallId)))).outcome)
        .toBeNull()
      await Effect.runPromise(adapter.hangUp(account, refOf(talking, live.providerCallId)))
      expect(liveCall).toMatchObject({ hungUpByApi: true, status: "completed" })
      // Telnyx says only whether a call is alive: one that ended unseen is taken as failed.
      expect((await Effect.runPromise(adapter.callStatus(account, refOf(talking, live.providerCallId)))).outcome).toBe(
        provider === "telnyx" ? "failed" : "completed"
      )

      const ringing = numberFor({ outcome: "completed", ringMs: 30_000 })
      const pending = await place(account, ringing)
      const ringingCall = await waitFor(() =>
        standIn.calls().find((call) => call.placementId === pending.providerCallId)
      )
      await Effect.runPromise(adapter.hangUp(account, refOf(ringing, pending.providerCallId)))
      expect(ringingCall).toMatchObject({ hungUpByApi: true, status: "canceled" })
      // Hanging up a call that is already over is not an error.
      await Effect.runPromise(adapter.hangUp(account, refOf(ringing, pending.providerCallId)))
    })

    it("asks the carrier for a call at most as long as it allows, from the product's longest setting", async () => {
      const standIn = standIns.get(provider)!
      const to = numberFor({ outcome: "completed", ringMs: 5, talkMs: 20 })
      const { providerCallId } = await place(accountOf(standIn), to, 14_400)
      const call = standIn.calls().find((candidate) => candidate.placementId === providerCallId)!
      expect(call.timeLimitSeconds).toBe(provider === "vonage" ? 7200 : 14_400)
    })

    it("tells a call the carrier refused (permanent) from a carrier it cannot reach, and is refused without its credentials", async () => {
      const standIn = standIns.get(provider)!
      const account = accountOf(standIn)
      const adapter = adapters.adapter(provider)
      const call = {
        to: "+15550000000",
        from: "+15559990000",
        answerUrl: "http://x/a",
        statusCallbackUrl: "http://x/s",
        timeLimitSeconds: 60
      }
      const secret =
        { twilio: "auth_token", vonage: "application_id", telnyx: "api_key", plivo: "auth_token" }[provider]
      const wrongCredentials = { ...account.credentials, [secret]: `${account.credentials[secret]}x` }
      const unauthenticated = await Effect.runPromise(
        Effect.flip(adapter.placeCall({ ...account, credentials: wrongCredentials }, call))
      )
      expect(unauthenticated).toMatchObject({ _tag: "CallNotPlaced", permanent: true })
      const unreachable = await Effect.runPromise(
        Effect.flip(adapter.placeCall({ ...account, apiBaseUrl: "http://127.0.0.1:1" }, call))
      )
      expect(unreachable).toMatchObject({ _tag: "CallNotPlaced", permanent: false })
    })

    it("tells a caller ID the carrier will not place calls from apart from other refusals", async () => {
      const standIn = standIns.get(provider)!
      const account = accountOf(standIn)
      const adapter = adapters.adapter(provider)
      const from = `+1555888${index}000`
      standIn.unverifyCallerId(from)
      const call = { to: numberFor({ outcome: "completed" }), answerUrl: "http://x/a", statusCallbackUrl: "http://x/s" }
      const refused = await Effect.runPromise(
        Effect.flip(adapter.placeCall(account, { ...call, from, timeLimitSeconds: 60 }))
      )
      expect(refused).toMatchObject({ _tag: "CallNotPlaced", permanent: true, callerIdRefused: true })
      standIn.rejectNextCalls(1)
      const other = await Effect.runPromise(
        Effect.flip(adapter.placeCall(account, { ...call, from: "+15559990000", timeLimitSeconds: 60 }))
      )
      expect(other).toMatchObject({ _tag: "CallNotPlaced", callerIdRefused: false })
    })
  }
)

describe("the loopback carriers sign as their carriers' own libraries verify", () => {
  const callbacksTo = (provider: CarrierProviderName) =>
    receiver.received.filter((request) => request.url.includes(`/status/${provider}/`))

  it("Vonage: webhook JWTs verify with @vonage/jwt and the signature secret, and the product's API JWTs with the application's public key", async () => {
    const vonage = standIns.get("vonage")! as CarrierStandIn & {
      signatureSecret: string
      publicKey: string
      presentedTokens: () => ReadonlyArray<string>
    }
    const callbacks = await waitFor(() => callbacksTo("vonage").length > 0 && callbacksTo("vonage"))
    for (const callback of callbacks) {
      expect(verifySignature(callback.headers["authorization"]!.slice(7), vonage.signatureSecret)).toBe(true)
      expect(verifySignature(callback.headers["authorization"]!.slice(7), "another-secret")).toBe(false)
    }
    expect(vonage.presentedTokens().length).toBeGreaterThan(0)
    for (const token of vonage.presentedTokens()) expect(verifySignature(token, vonage.publicKey)).toBe(true)
  })

  it("Telnyx: webhooks verify with the telnyx library's TelnyxWebhook and the account's public key", async () => {
    const telnyx = standIns.get("telnyx")! as CarrierStandIn & { publicKey: string }
    const callbacks = await waitFor(() => callbacksTo("telnyx").length > 0 && callbacksTo("telnyx"))
    const webhook = new TelnyxWebhook(telnyx.publicKey)
    for (const callback of callbacks) await webhook.verify(callback.rawBody, callback.headers as Record<string, string>)
    await expect(
      webhook.verify(callbacks[0]!.rawBody.replace("call.", "call.x"), callbacks[0]!.headers as Record<string, string>)
    ).rejects.toThrow()
  })

  it("Plivo: callbacks verify with the plivo library's validateV3Signature and the auth token", async () => {
    const standIn = standIns.get("plivo")! as CarrierStandIn & { authToken: string }
    const callbacks = await waitFor(() => callbacksTo("plivo").length > 0 && callbacksTo("plivo"))
    for (const callback of callbacks) {
      const params = Object.fromEntries(new URLSearchParams(callback.rawBody))
      const check = (token: string) =>
        plivo.validateV3Signature(
          "POST",
          callback.url,
          callback.headers["x-plivo-signature-v3-nonce"]!,
          token,
          callback.headers["x-plivo-signature-v3"]!,
          params
        )
      expect(check(standIn.authToken)).toBe(true)
      expect(check("another-token")).toBe(false)
    }
  })
})

describe("the loopback carriers refuse what their carriers document as invalid", () => {
  const post = (url: string, headers: Record<string, string>, body: unknown) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })

  it("Vonage: numbers with '+', a length_timer over 7200 and a request without the application's JWT", async () => {
    const vonage = standIns.get("vonage")! as CarrierStandIn & { applicationId: string; privateKey: string }
    const auth = {
      authorization: `Bearer ${vonageApiToken(vonage.applicationId, vonage.privateKey, Math.floor(Date.now() / 1000))}`
    }
    const call = {
      to: [{ type: "phone", number: "15550001111" }],
      from: { type: "phone", number: "15559990000" },
      answer_url: ["http://127.0.0.1:9/answer"],
      event_url: ["http://127.0.0.1:9/event"]
    }
    expect((await post(`${vonage.url}/v1/calls`, {}, call)).status).toBe(401)
    expect(
      (await post(`${vonage.url}/v1/calls`, auth, { ...call, to: [{ type: "phone", number: "+15550001111" }] })).status
    ).toBe(400)
    const tooLong = await post(`${vonage.url}/v1/calls`, auth, { ...call, length_timer: 7201 })
    expect(tooLong.status).toBe(400)
    expect(await tooLong.json()).toMatchObject({ invalid_parameters: [{ name: "length_timer" }] })
  })

  it("Telnyx: a dial without a connection_id or with a number not in E.164", async () => {
    const telnyx = standIns.get("telnyx")! as CarrierStandIn & { apiKey: string; connectionId: string }
    const auth = { authorization: `Bearer ${telnyx.apiKey}` }
    const dial = { connection_id: telnyx.connectionId, to: "+15550001111", from: "+15559990000" }
    expect((await post(`${telnyx.url}/v2/calls`, {}, dial)).status).toBe(401)
    const { connection_id: _connection, ...withoutConnection } = dial
    const refused = await post(`${telnyx.url}/v2/calls`, auth, withoutConnection)
    expect(refused.status).toBe(422)
    expect(await refused.json()).toMatchObject({ errors: [{ source: { pointer: "/connection_id" } }] })
    expect((await post(`${telnyx.url}/v2/calls`, auth, { ...dial, from: "15559990000" })).status).toBe(422)
  })

  it("Plivo: a call without answer_url, and a hang-up or record lookup by the request UUID, which names no call", async () => {
    const standIn = standIns.get("plivo")! as CarrierStandIn & { authId: string; authToken: string }
    const auth = { authorization: `Basic ${Buffer.from(`${standIn.authId}:${standIn.authToken}`).toString("base64")}` }
    const base = `${standIn.url}/v1/Account/${standIn.authId}`
    expect((await post(`${base}/Call/`, { authorization: "Basic eDp5" }, {})).status).toBe(401)
    expect((await post(`${base}/Call/`, auth, { from: "15559990000", to: "15550001111" })).status).toBe(400)
    scripts.set("15550001112", { outcome: "completed", ringMs: 5, talkMs: 30_000 })
    const placed = await post(`${base}/Call/`, auth, {
      from: "15559990000",
      to: "15550001112",
      answer_url: `${receiver.base}/answer/plivo/x`
    })
    expect(placed.status).toBe(201)
    const { request_uuid: requestUuid, message } = await placed.json() as { request_uuid: string; message: string }
    expect(message).toBe("call fired")
    const call = await waitFor(() =>
      standIn.calls().find((candidate) => candidate.placementId === requestUuid && candidate.status === "in-progress")
    )
    expect(call.id).not.toBe(requestUuid)
    expect((await fetch(`${base}/Call/${requestUuid}/`, { method: "DELETE", headers: auth })).status).toBe(404)
    expect((await fetch(`${base}/Request/${requestUuid}/`, { method: "DELETE", headers: auth })).status).toBe(404)
    expect((await fetch(`${base}/Call/${call.id}/`, { headers: auth })).status).toBe(404)
    expect((await fetch(`${base}/Call/${call.id}/?status=live`, { headers: auth })).status).toBe(200)
    expect((await fetch(`${base}/Call/${call.id}/`, { method: "DELETE", headers: auth })).status).toBe(204)
    expect(await (await fetch(`${base}/Call/${call.id}/`, { headers: auth })).json()).toMatchObject({
      call_uuid: call.id,
      hangup_source: "API Request"
    })
  })
})
