import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { voicePreflightProblems } from "../src/campaigns/voicePreflight.ts"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { postgresUrl } from "./support/database.ts"
import { carrierTelephony, contactsCsv, eventually, startedCampaign } from "./support/dialerFixtures.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { closedWindow, newTelephony, uploadCsv } from "./support/uploads.ts"
import { ensureVoiceModels } from "./support/voiceFixtures.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

let server: RunningServer
let api: Client
let carrier: FakeTwilio

beforeAll(async () => {
  carrier = await startFakeTwilio({
    // Rings long enough for a test to change the organization's settings after the campaign started.
    script: () => ({ outcome: "completed", ringMs: 1500 }),
    callee: () => [{ silence: 200 }, { hangUp: true }]
  })
  // The server's PUBLIC_URL is the default loopback one, as on a laptop.
  server = await startServer({ TALKGRAPH_SCHEDULER_POLL_MS: "200" }, { ownDatabase: true })
  api = client(server.url)
})
afterAll(async () => {
  await server?.close()
  await carrier?.close()
})

const MODELS = "/api/v1/organizations/model-configurations"
const CARRIERS = "/api/v1/organizations/telephony-configs"

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

const createdCampaign = async (account: TestAccount, settings: Record<string, unknown> = {}) => {
  const workflowId = await insertWorkflow(server, account.organizationId)
  const sourceId = await uploadCsv(api, { token: account.token }, "phone_number\n+14155550101\n")
  const created = await api.post("/api/v1/campaign/create", {
    name: "Preflight",
    workflow_id: workflowId,
    source_type: "csv",
    source_id: sourceId,
    ...settings
  }, {
    token: account.token
  })
  expect(created.status).toBe(200)
  return created.body.id as number
}

describe("speech settings that can never work", () => {
  it("are refused when saved: an unknown provider, a provider's own API without a key", async () => {
    const account = await newAccount(api)
    const as = { token: account.token }
    const refused = await api.put(MODELS, {
      stt: { provider: "openai" },
      tts: { provider: "whisper-tts", api_key: "key-123456789" }
    }, as)
    expect(refused.status).toBe(422)
    expect(refused.body.detail).toEqual([
      {
        loc: ["body", "stt", "api_key"],
        msg: expect.stringMatching(/api_key is required for openai's own API/),
        type: "value_error"
      },
      {
        loc: ["body", "tts", "provider"],
        msg: expect.stringMatching(
          /"whisper-tts" is not a text-to-speech provider; use elevenlabs, cartesia, deepgram, openai, local/
        ),
        type: "value_error"
      }
    ])
    expect(
      (await api.put(MODELS, { stt: { provider: "deepgram-live", api_key: "k-123456789" } }, as)).body.detail[0].loc
    ).toEqual(["body", "stt", "provider"])
    expect((await api.get(MODELS, as)).body).toMatchObject({ stt: null, tts: null })
  })

  it("are accepted where they can work: a keyless endpoint of one's own, the offline voice", async () => {
    const account = await newAccount(api)
    const saved = await api.put(MODELS, {
      stt: { provider: "openai", base_url: "http://127.0.0.1:9000/v1" },
      tts: { provider: "local" }
    }, { token: account.token })
    expect(saved.status).toBe(200)
    expect(saved.body.stt).toMatchObject({
      provider: "openai",
      base_url: "http://127.0.0.1:9000/v1",
      api_key_set: false
    })
  })
})

describe("starting a campaign", () => {
  it("is refused with 409 naming every missing setting when the agent could not speak", async () => {
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, carrier)
    const id = await createdCampaign(account, { schedule_config: closedWindow() })
    const refused = await api.post(`/api/v1/campaign/${id}/start`, undefined, { token: account.token })
    expect(refused.status).toBe(409)
    expect(refused.body.detail).toBe(
      "The campaign cannot place calls: the organization has no LLM configured; the organization has no speech-to-text (stt) configured; " +
        "the organization has no text-to-speech (tts) configured"
    )
    expect((await api.get(`/api/v1/campaign/${id}`, { token: account.token })).body.state).toBe("created")
    expect(carrier.calls()).toHaveLength(0)

    await ensureVoiceModels(api, { token: account.token })
    // A setting saved before such settings were refused: OpenAI's own API without a key.
    const keylessOpenAi = {
      provider: "openai",
      model: null,
      base_url: null,
      api_key_sealed: null,
      api_key_hint: "",
      voice: null,
      language: null
    }
    await query((sql) =>
      sql`
      UPDATE organization_model_settings SET stt = ${
        JSON.stringify(keylessOpenAi)
      }::jsonb WHERE organization_id = ${account.organizationId}`
    )
    const unusable = await api.post(`/api/v1/campaign/${id}/start`, undefined, { token: account.token })
    expect(unusable.status).toBe(409)
    expect(unusable.body.detail).toMatch(
      /its speech-to-text \(stt\) setting cannot work: api_key is required for openai's own API/
    )

    await api.put(MODELS, {
      stt: { provider: "deepgram", api_key: "dg-unused-key-0000", base_url: "http://127.0.0.1:9" }
    }, { token: account.token })
    const started = await api.post(`/api/v1/campaign/${id}/start`, undefined, { token: account.token })
    expect(started.status).toBe(200)
  })

  it("is refused while PUBLIC_URL is loopback for a real carrier; a carrier on loopback itself (a stand-in) may call it", async () => {
    const account = await newAccount(api)
    const as = { token: account.token }
    const real = await api.post(CARRIERS, {
      name: "Twilio itself",
      is_default_outbound: true,
      config: { provider: "twilio", account_sid: "AC0123456789abcdef", auth_token: "secret-auth-token-123456" }
    }, as)
    expect(real.status).toBe(409)
    expect(real.body.detail).toMatch(/PUBLIC_URL is http:\/\/127\.0\.0\.1:\d+, a loopback address twilio cannot reach/)

    // A configuration saved while PUBLIC_URL was another one, now pointed at Twilio's own API.
    const telephonyId = await newTelephony(api, as)
    const id = await createdCampaign(account, { schedule_config: closedWindow() })
    await query((sql) => sql`UPDATE telephony_configurations SET api_base_url = NULL WHERE id = ${telephonyId}`)
    const refused = await api.post(`/api/v1/campaign/${id}/start`, undefined, as)
    expect(refused.status).toBe(409)
    expect(refused.body.detail).toMatch(
      /PUBLIC_URL is http:\/\/127\.0\.0\.1:\d+, a loopback address twilio cannot reach/
    )
    await query((sql) =>
      sql`UPDATE telephony_configurations SET api_base_url = 'http://127.0.0.1:9' WHERE id = ${telephonyId}`
    )
    expect((await api.post(`/api/v1/campaign/${id}/start`, undefined, as)).status).toBe(200)
  })

  it("fails a call whose media stream is refused, with its reason, instead of recording it completed", async () => {
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, carrier)
    const id = await startedCampaign(server, api, account, contactsCsv(["+14155550177"]))
    // The settings go while the call rings: the answered call's media stream is refused.
    await query((sql) =>
      sql`UPDATE organization_model_settings SET stt = NULL WHERE organization_id = ${account.organizationId}`
    )

    const [attempt] = await eventually(
      async () => {
        const rows = await query<{ outcome: string | null; end_reason: string | null; run_id: number }>((sql) =>
          sql`SELECT outcome, end_reason, run_id FROM campaign_attempts WHERE campaign_id = ${id} AND ended_at IS NOT NULL`
        )
        return rows.length > 0 ? rows : undefined
      },
      20_000,
      "attempt ended"
    )
    expect(attempt).toMatchObject({ outcome: "failed", end_reason: "media_refused" })
    const [run] = await query<{ state: string; end_reason: string; error: string }>((sql) =>
      sql`SELECT state, end_reason, error FROM runs WHERE id = ${attempt!.run_id}`
    )
    expect(run).toMatchObject({
      state: "failed",
      end_reason: "media_refused",
      error: "The agent cannot take voice calls: its organization needs LLM, STT and TTS settings"
    })
    const campaign = await eventually(
      async () => {
        const current = (await api.get(`/api/v1/campaign/${id}`, { token: account.token })).body
        return current.state === "completed" ? current : undefined
      },
      20_000,
      "campaign completed"
    )
    expect(campaign).toMatchObject({ processed_rows: 1, failed_rows: 1 })
    const call = carrier.calls().find((candidate) => candidate.to === "+14155550177")!
    expect(call.mediaError).not.toBeNull()
  })
})

describe("telephony configuration fields", () => {
  it("refuses an unknown field by name, at the top (a misplaced api_base_url) and inside config", async () => {
    const account = await newAccount(api)
    const as = { token: account.token }
    const config = {
      provider: "twilio",
      account_sid: "AC0123456789abcdef",
      auth_token: "secret-auth-token-123456",
      api_base_url: "http://127.0.0.1:9"
    }
    const misplaced = await api.post(CARRIERS, {
      name: "Misplaced",
      api_base_url: "http://127.0.0.1:9",
      config: { ...config, api_base_url: undefined }
    }, as)
    expect(misplaced.status).toBe(422)
    expect(misplaced.body.detail).toEqual([
      expect.objectContaining({ loc: ["body", "api_base_url"], type: "extra_forbidden" })
    ])
    const misspelt = await api.post(CARRIERS, {
      name: "Misspelt",
      config: { ...config, api_base_uri: "http://127.0.0.1:8" }
    }, as)
    expect(misspelt.status).toBe(422)
    expect(misspelt.body.detail).toEqual([
      expect.objectContaining({ loc: ["body", "config", "api_base_uri"], type: "extra_forbidden" })
    ])
    expect((await api.get(CARRIERS, as)).body.configurations).toEqual([])

    const created = await api.post(CARRIERS, { name: "Right", config }, as)
    expect(created.status).toBe(200)
    const update = await api.put(`${CARRIERS}/${created.body.id}`, { api_base_url: "http://127.0.0.1:8" }, as)
    expect(update.status).toBe(422)
    expect(update.body.detail).toEqual([
      expect.objectContaining({ loc: ["body", "api_base_url"], type: "extra_forbidden" })
    ])
    const inside = await api.put(`${CARRIERS}/${created.body.id}`, { config: { ...config, amd: true } }, as)
    expect(inside.status).toBe(422)
    expect(inside.body.detail).toEqual([
      expect.objectContaining({ loc: ["body", "config", "amd"], type: "extra_forbidden" })
    ])
  })
})

describe.runIf(postgresUrl())("storage shared by several processes", () => {
  it("refuses to start a campaign on PostgreSQL with local storage unless every process shares it", async () => {
    const separate = await startServer({ TALKGRAPH_LOCAL_STORAGE_SHARED: "false" })
    try {
      const api = client(separate.url)
      const account = await newAccount(api)
      await newTelephony(api, { token: account.token })
      const workflowId = await insertWorkflow(separate, account.organizationId)
      const sourceId = await uploadCsv(api, { token: account.token }, "phone_number\n+14155550101\n")
      const created = await api.post("/api/v1/campaign/create", {
        name: "Storage",
        workflow_id: workflowId,
        source_type: "csv",
        source_id: sourceId,
        schedule_config: closedWindow()
      }, { token: account.token })
      const refused = await api.post(`/api/v1/campaign/${created.body.id}/start`, undefined, { token: account.token })
      expect(refused.status).toBe(409)
      expect(refused.body.detail).toMatch(
        /STORAGE_URL is a local directory while DATABASE_URL .* TALKGRAPH_LOCAL_STORAGE_SHARED=true/
      )
    } finally {
      await separate.close()
    }
  })
})

describe("the preflight rules", () => {
  const ready = {
    llm: true,
    stt: { provider: "deepgram", base_url: null, hasKey: true },
    tts: { provider: "local", base_url: null, hasKey: false },
    publicUrl: "https://talkgraph.example.com",
    carrier: { provider: "twilio", apiBaseUrl: "https://api.twilio.com" },
    storage: { sharedDatabase: true, localStorage: false, localStorageShared: false }
  }

  it("pass a setup that can run calls, and name each problem of one that cannot", () => {
    expect(voicePreflightProblems(ready)).toEqual([])
    expect(voicePreflightProblems({ ...ready, publicUrl: "http://10.0.0.5:8000" })).toEqual([
      expect.stringMatching(/an internal address twilio cannot reach/)
    ])
    expect(voicePreflightProblems({ ...ready, publicUrl: "http://localhost:8000" })).toEqual([
      expect.stringMatching(/a loopback address/)
    ])
    expect(
      voicePreflightProblems({
        ...ready,
        publicUrl: "http://10.0.0.5:8000",
        carrier: { provider: "twilio", apiBaseUrl: "http://10.0.0.9" }
      })
    ).toEqual([])
    expect(
      voicePreflightProblems({
        ...ready,
        storage: { sharedDatabase: true, localStorage: true, localStorageShared: false }
      })
    ).toHaveLength(1)
    expect(
      voicePreflightProblems({
        ...ready,
        storage: { sharedDatabase: true, localStorage: true, localStorageShared: true }
      })
    ).toEqual([])
    expect(
      voicePreflightProblems({
        ...ready,
        storage: { sharedDatabase: false, localStorage: true, localStorageShared: false }
      })
    ).toEqual([])
  })
})
