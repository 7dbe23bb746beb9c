import { Effect, Option } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { twilioAdapter } from "../layers/telephony/carriers/twilio.ts"
import type { OutboundHttp } from "../services/OutboundHttp.ts"
import type { CarrierAccount, WebhookRequest } from "../services/Telephony.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import { LoopbackOutbound } from "./support/outbound.ts"

/** Receives the carrier's callbacks the way the product's webhook endpoint would. */
const startReceiver = async () => {
  const received: Array<WebhookRequest> = []
  const server = http.createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${request.url}`
      received.push({ url, headers: request.headers as Record<string, string>, rawBody: body })
      response.writeHead(200, { "content-type": "text/xml" })
      response.end(
        request.url?.startsWith("/answer")
          ? twilioAdapter.answerMarkup("wss://talkgraph.test/media/1?token=a&b=c").body
          : ""
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, close: () => server.close() }
}

let carrier: FakeTwilio
let receiver: Awaited<ReturnType<typeof startReceiver>>
let account: CarrierAccount

const scripts: Record<string, "completed" | "voicemail" | "busy" | "silent"> = {
  "+15550000001": "completed",
  "+15550000002": "voicemail",
  "+15550000003": "busy",
  "+15550000004": "silent"
}

beforeAll(async () => {
  carrier = await startFakeTwilio({
    script: ({ to }) => ({ outcome: scripts[to] ?? "completed", ringMs: 5, talkMs: 20 })
  })
  receiver = await startReceiver()
  account = {
    configurationId: 1,
    provider: "twilio",
    apiBaseUrl: carrier.url,
    credentials: { account_sid: carrier.accountSid, auth_token: carrier.authToken },
    machineDetection: true
  }
})
afterAll(async () => {
  await carrier?.close()
  receiver?.close()
})

/** Runs an adapter call through the outbound client the suite's stand-ins need (loopback allowed). */
const run = <A, E>(effect: Effect.Effect<A, E, OutboundHttp>) =>
  Effect.runPromise(Effect.provide(effect, LoopbackOutbound))

const place = (to: string) =>
  run(twilioAdapter.placeCall(account, {
    to,
    from: "+15559990000",
    answerUrl: `${receiver.base}/answer`,
    statusCallbackUrl: `${receiver.base}/status?attempt=7`,
    timeLimitSeconds: 300
  }))

const waitFor = async (predicate: () => boolean) => {
  for (let i = 0; i < 200 && !predicate(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  expect(predicate()).toBe(true)
}

const finalStatuses = (sid: string) =>
  receiver.received
    .filter((request) => request.url.includes("/status"))
    .map((request) => twilioAdapter.parseStatusCallback(request))
    .filter(Option.isSome)
    .map((status) => status.value)
    .filter((status) => status.providerCallId === sid && status.outcome !== null)

describe("Twilio adapter", () => {
  it("places a call with the answer URL, status callback and machine detection", async () => {
    const { providerCallId } = await place("+15550000001")
    const call = carrier.calls().find((candidate) => candidate.sid === providerCallId)!
    expect(call).toMatchObject({ to: "+15550000001", from: "+15559990000", machineDetection: true })
    expect(call.statusCallback).toBe(`${receiver.base}/status?attempt=7`)
    await waitFor(() => finalStatuses(providerCallId).length === 1)
    expect(finalStatuses(providerCallId)[0]!.outcome).toBe("completed")
    expect(call.answerMarkup).toContain("<Stream url=\"wss://talkgraph.test/media/1?token=a&amp;b=c\"/>")
  })

  it("accepts the carrier's signed callbacks and refuses forged or altered ones", async () => {
    await place("+15550000003")
    await waitFor(() => receiver.received.length > 0)
    const genuine = receiver.received.find((request) => request.url.includes("/status"))!
    expect(Effect.runSync(twilioAdapter.verifyWebhook(account, genuine))).toBe(true)
    expect(
      Effect.runSync(
        twilioAdapter.verifyWebhook(account, {
          ...genuine,
          rawBody: genuine.rawBody.replace("CallStatus=", "CallStatus=busy")
        })
      )
    ).toBe(false)
    expect(Effect.runSync(twilioAdapter.verifyWebhook(account, { ...genuine, headers: {} }))).toBe(false)
    expect(
      Effect.runSync(
        twilioAdapter.verifyWebhook(
          { ...account, credentials: { ...account.credentials, auth_token: "other" } },
          genuine
        )
      )
    ).toBe(false)
  })

  it("reports an answering machine as voicemail and a busy line as busy", async () => {
    const voicemail = await place("+15550000002")
    const busy = await place("+15550000003")
    await waitFor(() =>
      finalStatuses(voicemail.providerCallId).length === 1 && finalStatuses(busy.providerCallId).length === 1
    )
    expect(finalStatuses(voicemail.providerCallId)[0]!.outcome).toBe("voicemail")
    expect(finalStatuses(busy.providerCallId)[0]!.outcome).toBe("busy")
  })

  it("reads a silent call's status from the API, and hangs it up", async () => {
    const { providerCallId } = await place("+15550000004")
    const call = { providerCallId, liveCallId: null }
    const before = await run(twilioAdapter.callStatus(account, call))
    expect(before).toEqual({ providerCallId, outcome: null, durationSeconds: null })
    await run(twilioAdapter.hangUp(account, call))
    const after = await run(twilioAdapter.callStatus(account, call))
    expect(after.outcome).toBe("canceled")
    await run(twilioAdapter.hangUp(account, { providerCallId: "CA0000000000000000000000000000dead", liveCallId: null }))
  })

  it("tells a refused call (permanent) from an unreachable carrier (transient)", async () => {
    carrier.rejectNextCalls(1, 400, 21211)
    const refused = await run(Effect.flip(twilioAdapter.placeCall(account, {
      to: "+1555",
      from: "+15559990000",
      answerUrl: "http://x/a",
      statusCallbackUrl: "http://x/s",
      timeLimitSeconds: 60
    })))
    expect(refused).toMatchObject({
      _tag: "CallNotPlaced",
      permanent: true,
      message: "Twilio refused the call (HTTP 400, code 21211)"
    })
    const unreachable = await run(
      Effect.flip(twilioAdapter.placeCall({ ...account, apiBaseUrl: "http://127.0.0.1:1" }, {
        to: "+15550000001",
        from: "+15559990000",
        answerUrl: "http://x/a",
        statusCallbackUrl: "http://x/s",
        timeLimitSeconds: 60
      }))
    )
    expect(unreachable).toMatchObject({ _tag: "CallNotPlaced", permanent: false })
  })
})
