import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeWav } from "../src/audio/wav.ts"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer, uniqueEmail } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let speech: FakeSpeechApis
let deepgram: FakeDeepgram

beforeAll(async () => {
  ;[server, llm, speech, deepgram] = await Promise.all([
    startServer(),
    startScriptedLlm(),
    startFakeSpeechApis(),
    startFakeDeepgram()
  ])
  api = client(server.url)
})
afterAll(() => Promise.all([server?.close(), llm?.close(), speech?.close(), deepgram?.close()]))

const MODELS = "/api/v1/organizations/model-configurations"
const TEST = `${MODELS}/test`

const useLlm = (account: TestAccount, baseUrl = llm.baseUrl) =>
  api.put(MODELS, {
    llm: { provider: "openai", model: "scripted-model", api_key: "sk-test-key-123456", base_url: baseUrl }
  }, {
    token: account.token
  })

const useSpeech = (account: TestAccount, ttsKey = speech.apiKey) =>
  api.put(MODELS, {
    stt: { provider: "deepgram", model: "nova-3", api_key: deepgram.apiKey, base_url: deepgram.url, language: "en" },
    tts: { provider: "elevenlabs", model: "eleven_flash_v2_5", api_key: ttsKey, base_url: speech.url, voice: "v1" }
  }, { token: account.token })

describe("testing the organization's model settings", () => {
  it("asks the saved LLM for a short reply and shows it with the latency", async () => {
    const account = await newAccount(api)
    expect((await useLlm(account)).status).toBe(200)
    llm.enqueue(reply.content("Yes, I can be reached."))
    const checked = await api.post(TEST, { kind: "llm" }, { token: account.token })
    expect(checked.status).toBe(200)
    expect(checked.body).toMatchObject({
      kind: "llm",
      provider: "openai",
      model: "scripted-model",
      reply: "Yes, I can be reached."
    })
    expect(checked.body.latency_ms).toBeGreaterThanOrEqual(0)
    const request = llm.requests.at(-1)!
    expect(request.headers.authorization).toBe("Bearer sk-test-key-123456")
  })

  it("names the failing LLM provider without saying how it failed", async () => {
    const account = await newAccount(api)
    await useLlm(account)
    llm.enqueue(reply.error(500))
    const failed = await api.post(TEST, { kind: "llm" }, { token: account.token })
    expect(failed.status).toBe(502)
    expect(failed.body.detail).toBe(
      "The LLM provider (openai) could not be used; the server log has the details"
    )
    expect(JSON.stringify(failed.body)).not.toMatch(/500|internal-detail|sk-test/)
  })

  it("says the same when the LLM's address refuses connections", async () => {
    const account = await newAccount(api)
    await useLlm(account, "http://127.0.0.1:9/v1")
    const failed = await api.post(TEST, { kind: "llm" }, { token: account.token })
    expect(failed.status).toBe(502)
    expect(failed.body.detail).toBe("The LLM provider (openai) could not be used; the server log has the details")
  })

  it("speaks the test phrase with the saved TTS and answers a playable WAV", async () => {
    const account = await newAccount(api)
    expect((await useSpeech(account)).status).toBe(200)
    const checked = await api.post(TEST, { kind: "tts" }, { token: account.token })
    expect(checked.status).toBe(200)
    expect(checked.body).toMatchObject({ kind: "tts", provider: "elevenlabs", phrase: expect.any(String) })
    const wav = decodeWav(Buffer.from(checked.body.audio_wav_base64, "base64"))
    expect(wav.sampleRate).toBe(16000)
    expect(checked.body.audio_bytes).toBe(Buffer.from(checked.body.audio_wav_base64, "base64").length)
    expect(checked.body.audio_duration_ms).toBeGreaterThan(500)
    expect(speech.requests.at(-1)!.text).toBe(checked.body.phrase)
  })

  it("transcribes a phrase spoken by the organization's TTS with the saved STT", async () => {
    const account = await newAccount(api)
    await useSpeech(account)
    deepgram.script("model-check", ["testing talkgraph one two three"])
    const checked = await api.post(TEST, { kind: "stt" }, { token: account.token })
    expect(checked.status).toBe(200)
    expect(checked.body).toMatchObject({
      kind: "stt",
      provider: "deepgram",
      model: "nova-3",
      transcript: "testing talkgraph one two three"
    })
    expect(deepgram.connections.at(-1)!.audioSeconds).toBeGreaterThan(0.5)
  })

  it("names the failing TTS provider when it refuses the key, never the status", async () => {
    const account = await newAccount(api)
    await useSpeech(account, "not-the-right-key")
    const failed = await api.post(TEST, { kind: "tts" }, { token: account.token })
    expect(failed.status).toBe(502)
    expect(failed.body.detail).toBe(
      "The text-to-speech provider (elevenlabs) could not be used; the server log has the details"
    )
  })

  it("names the failing STT provider when it refuses the key", async () => {
    const account = await newAccount(api)
    await useSpeech(account)
    await api.put(MODELS, {
      stt: { provider: "deepgram", model: "nova-3", api_key: "not-the-deepgram-key", base_url: deepgram.url }
    }, { token: account.token })
    const failed = await api.post(TEST, { kind: "stt" }, { token: account.token })
    expect(failed.status).toBe(502)
    expect(failed.body.detail).toBe(
      "The speech-to-text provider (deepgram) could not be used; the server log has the details"
    )
  })

  it("speaks the STT test phrase with the offline voice when the organization has no TTS", async () => {
    const account = await newAccount(api)
    await api.put(MODELS, {
      stt: { provider: "deepgram", model: "nova-3", api_key: deepgram.apiKey, base_url: deepgram.url }
    }, { token: account.token })
    deepgram.script("model-check", ["testing talkgraph one two three"])
    const before = speech.requests.length
    const checked = await api.post(TEST, { kind: "stt" }, { token: account.token })
    expect(checked.status).toBe(200)
    expect(checked.body.transcript).toBe("testing talkgraph one two three")
    expect(deepgram.connections.at(-1)!.audioSeconds).toBeGreaterThan(1)
    expect(speech.requests.length).toBe(before)
  })

  it("answers 422 for a kind with no configuration, and for an unknown kind", async () => {
    const account = await newAccount(api)
    const none = await api.post(TEST, { kind: "stt" }, { token: account.token })
    expect(none.status).toBe(422)
    expect(none.body.detail[0]).toMatchObject({ loc: ["body", "kind"], msg: expect.stringContaining("speech-to-text") })
    const unknown = await api.post(TEST, { kind: "video" }, { token: account.token })
    expect(unknown.status).toBe(422)
    expect(unknown.body.detail[0].loc).toEqual(["body", "kind"])
  })

  it("refuses a member (403) as changing the settings does, without calling the provider", async () => {
    const owner = await newAccount(api)
    await useLlm(owner)
    const email = uniqueEmail("member")
    await api.post("/api/v1/organizations/members", { email, password: "a first password for them", role: "member" }, {
      token: owner.token
    })
    const login = await api.post("/api/v1/auth/login", { email, password: "a first password for them" })
    const before = llm.requests.length
    const refused = await api.post(TEST, { kind: "llm" }, { token: login.body.token })
    expect(refused.status).toBe(403)
    expect(refused.body.detail).toMatch(/admin/)
    expect(llm.requests.length).toBe(before)
  })

  it("uses only the caller's organization's settings", async () => {
    const configured = await newAccount(api)
    await useLlm(configured)
    const other = await newAccount(api)
    const before = llm.requests.length
    const checked = await api.post(TEST, { kind: "llm" }, { token: other.token })
    expect(checked.status).toBe(422)
    expect(llm.requests.length).toBe(before)
  })
})
