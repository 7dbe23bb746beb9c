import { Effect, Metric } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { progressReads, progressWatchers } from "../layers/campaigns/campaignProgressFeed.ts"
import { readEventStream } from "../web/src/editor/eventStream.ts"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { carrierTelephony, contactsCsv, eventually, numbersFrom, startedCampaign } from "./support/dialerFixtures.ts"
import { type CallScript, type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { ensureVoiceModels } from "./support/voiceFixtures.ts"

let server: RunningServer
let api: Client
let carrier: FakeTwilio
/** How long each number's call talks before the callee hangs up. */
const talkFor = new Map<string, number>()

beforeAll(async () => {
  carrier = await startFakeTwilio({
    script: ({ to }): CallScript => ({ outcome: "completed", ringMs: 50, talkMs: talkFor.get(to) ?? 300 })
  })
  // Its own database: this server dials the campaigns it sees.
  server = await startServer({ TALKGRAPH_SCHEDULER_POLL_MS: "200" }, { ownDatabase: true })
  api = client(server.url)
})
/** Every follower a test opened: a failed test must not leave a stream holding the test server open. */
const following: Array<AbortController> = []
afterEach(() => {
  for (const abort of following.splice(0)) abort.abort()
})
afterAll(async () => {
  await server?.close()
  await carrier?.close()
})

interface ProgressFrame {
  readonly state: string
  readonly pending: number
  readonly completed: number
  readonly live_calls: number
  readonly dispatch: { readonly rate_limit_per_second: number; readonly breaker: { readonly state: string } }
}

/** Follows a campaign's progress stream; each frame is kept with the moment it arrived. */
const follow = async (account: TestAccount, campaignId: number) => {
  const abort = new AbortController()
  following.push(abort)
  const response = await fetch(`${server.url}/api/v1/campaign/${campaignId}/progress/stream`, {
    headers: { authorization: `Bearer ${account.token}` },
    signal: abort.signal
  })
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
  const frames: Array<{ readonly at: number; readonly progress: ProgressFrame }> = []
  const ended = (async () => {
    for await (const frame of readEventStream(response.body!)) {
      if (frame.event === "progress") frames.push({ at: Date.now(), progress: frame.data as ProgressFrame })
    }
  })().catch((error: unknown) => {
    if (!abort.signal.aborted) throw error
  })
  return { frames, ended, close: () => abort.abort() }
}

const telephonyFor = async (account: TestAccount) => carrierTelephony(api, { token: account.token }, carrier)

const counter = (metric: typeof progressReads) => Effect.runPromise(Metric.value(metric)).then((state) => state.count)
const gauge = () => Effect.runPromise(Metric.value(progressWatchers)).then((state) => state.value)

describe("live campaign progress", () => {
  it(
    "sends the progress at once, then each change: the start, a call that completed within a second of its end, and the end of the campaign, where the stream closes",
    async () => {
      const account = await newAccount(api)
      await telephonyFor(account)
      const numbers = numbersFrom("+1415330", 2)
      talkFor.set(numbers[0]!, 300)
      talkFor.set(numbers[1]!, 2500)
      const id = await startedCampaign(server, api, account, contactsCsv(numbers), { max_concurrency: 1 }, false)

      const follower = await follow(account, id)
      await eventually(async () => follower.frames.length > 0, 5_000, "first snapshot")
      expect(follower.frames[0]!.progress).toMatchObject({ state: "created", pending: 2, completed: 0 })
      expect(follower.frames[0]!.progress.dispatch.breaker.state).toBe("closed")

      await ensureVoiceModels(api, { token: account.token })
      const start = await api.post(`/api/v1/campaign/${id}/start`, undefined, { token: account.token })
      expect(start.body).toMatchObject({ state: "running" })
      const running = await eventually(
        async () => follower.frames.find((frame) => frame.progress.state === "running"),
        5_000,
        "running pushed"
      )
      expect(running.progress.dispatch.rate_limit_per_second).toBeGreaterThan(0)

      const firstDone = await eventually(
        async () => follower.frames.find((frame) => frame.progress.completed >= 1),
        15_000,
        "a completed call pushed"
      )
      const endedAt = carrier.calls().find((call) => call.to === numbers[0])!.endedAt!
      // The dialer rings the campaign when it records the outcome: no waiting for the backstop read.
      expect(firstDone.at - endedAt).toBeLessThan(1_000)

      await follower.ended
      const last = follower.frames.at(-1)!.progress
      expect(last).toMatchObject({ state: "completed", completed: 2, pending: 0, live_calls: 0 })
      // Only changes are sent: no two frames in a row are the same.
      const texts = follower.frames.map((frame) => JSON.stringify(frame.progress))
      expect(texts.every((text, index) => index === 0 || text !== texts[index - 1])).toBe(true)
    },
    40_000
  )

  it("answers 404 for another organization's campaign, and 401 without a token, before any stream", async () => {
    const owner = await newAccount(api)
    await telephonyFor(owner)
    const id = await startedCampaign(server, api, owner, contactsCsv(numbersFrom("+1415331", 1)), {}, false)
    const stranger = await newAccount(api)
    const foreign = await fetch(`${server.url}/api/v1/campaign/${id}/progress/stream`, {
      headers: { authorization: `Bearer ${stranger.token}` }
    })
    expect(foreign.status).toBe(404)
    expect(await foreign.json()).toEqual({ detail: expect.stringMatching(/Campaign/) })
    const anonymous = await fetch(`${server.url}/api/v1/campaign/${id}/progress/stream`)
    expect(anonymous.status).toBe(401)

    // Also while the owner follows it: a campaign being watched is still not the stranger's.
    const follower = await follow(owner, id)
    await eventually(async () => follower.frames.length > 0, 5_000, "owner's snapshot")
    const meanwhile = await fetch(`${server.url}/api/v1/campaign/${id}/progress/stream`, {
      headers: { authorization: `Bearer ${stranger.token}` }
    })
    expect(meanwhile.status).toBe(404)
    follower.close()
  })

  it(
    "reads a campaign once per change however many follow it, and stops watching when the last one leaves",
    async () => {
      const account = await newAccount(api)
      await telephonyFor(account)
      const numbers = numbersFrom("+1415332", 3)
      for (const number of numbers) talkFor.set(number, 20_000)
      const id = await startedCampaign(server, api, account, contactsCsv(numbers), { max_concurrency: 1 })
      await eventually(async () => carrier.calls().some((call) => call.to === numbers[0]), 10_000, "first call placed")
      await eventually(async () => (await gauge()) === 0, 10_000, "no campaign followed yet")

      const readsBefore = await counter(progressReads)
      const started = Date.now()
      const followers = await Promise.all([1, 2, 3].map(() => follow(account, id)))
      await eventually(async () => followers.every((follower) => follower.frames.length > 0), 5_000, "every snapshot")
      expect(await gauge()).toBe(1)
      await new Promise((resolve) => setTimeout(resolve, 4_000))
      const reads = (await counter(progressReads)) - readsBefore
      // One read to seed the watcher, then one per 2-second backstop: three watchers would read three times as often.
      expect(reads).toBeGreaterThanOrEqual(2)
      expect(reads).toBeLessThanOrEqual(2 + Math.ceil((Date.now() - started) / 2_000))
      // They all saw the same snapshot.
      expect(new Set(followers.map((follower) => JSON.stringify(follower.frames[0]!.progress))).size).toBe(1)

      for (const follower of followers) follower.close()
      await eventually(async () => (await gauge()) === 0, 5_000, "watcher stopped")
      const stoppedAt = await counter(progressReads)
      await new Promise((resolve) => setTimeout(resolve, 2_500))
      expect(await counter(progressReads)).toBe(stoppedAt)
      expect((await api.post(`/api/v1/campaign/${id}/cancel`, undefined, { token: account.token })).status).toBe(200)
    },
    40_000
  )
})
