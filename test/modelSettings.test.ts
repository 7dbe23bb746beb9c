import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ModelSettings } from "../services/ModelSettings.ts"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(() => server?.close())

const PATH = "/api/v1/organizations/model-configurations"
const OPENAI_KEY = "sk-test-0123456789abcdefWXYZ"

const storedRow = (organizationId: number) =>
  server.run(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<
        { text: string }
      >`SELECT row_to_json(s)::text AS text FROM organization_model_settings s WHERE organization_id = ${organizationId}`)
  )

const decryptedLlm = (organizationId: number) =>
  server.run(Effect.flatMap(ModelSettings, (settings) => settings.llmFor(organizationId)))

describe("organization model settings", () => {
  it("starts empty", async () => {
    const account = await newAccount(api)
    const reply = await api.get(PATH, { token: account.token })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ llm: null, stt: null, tts: null, embeddings: null, updated_at: null })
  })

  it("stores the LLM key encrypted and only ever shows it masked", async () => {
    const account = await newAccount(api)
    const put = await api.put(PATH, { llm: { provider: "openai", model: "gpt-4o-mini", api_key: OPENAI_KEY } }, {
      token: account.token
    })
    expect(put.status).toBe(200)
    expect(put.body.llm).toEqual({
      provider: "openai",
      model: "gpt-4o-mini",
      base_url: null,
      api_key: "****WXYZ",
      api_key_set: true
    })
    const get = await api.get(PATH, { token: account.token })
    expect(get.body.llm).toEqual(put.body.llm)
    expect(JSON.stringify(get.body)).not.toContain("0123456789")

    const [row] = await storedRow(account.organizationId)
    expect(row!.text).not.toContain(OPENAI_KEY)
    expect(row!.text).not.toContain("0123456789abcdef")

    const llm = await decryptedLlm(account.organizationId)
    expect(Option.isSome(llm) && Redacted.value(llm.value.apiKey!)).toBe(OPENAI_KEY)
  })

  it("keeps the stored key when a PUT omits it or sends the mask back", async () => {
    const account = await newAccount(api)
    await api.put(PATH, { llm: { provider: "openai", model: "gpt-4o-mini", api_key: OPENAI_KEY } }, {
      token: account.token
    })
    const omitted = await api.put(PATH, { llm: { provider: "openai", model: "gpt-4o" } }, { token: account.token })
    expect(omitted.body.llm).toMatchObject({ model: "gpt-4o", api_key: "****WXYZ", api_key_set: true })
    const masked = await api.put(PATH, { llm: { ...omitted.body.llm, model: "gpt-4.1" } }, { token: account.token })
    expect(masked.status).toBe(200)
    expect(masked.body.llm).toMatchObject({ model: "gpt-4.1", api_key: "****WXYZ" })
    const llm = await decryptedLlm(account.organizationId)
    expect(Option.isSome(llm) && Redacted.value(llm.value.apiKey!)).toBe(OPENAI_KEY)

    const replaced = await api.put(PATH, {
      llm: { provider: "openai", model: "gpt-4.1", api_key: "sk-another-key-9876" }
    }, { token: account.token })
    expect(replaced.body.llm.api_key).toBe("****9876")
  })

  it("never carries a stored key over to a different base_url", async () => {
    const account = await newAccount(api)
    await api.put(PATH, { llm: { provider: "openai", model: "gpt-4o-mini", api_key: OPENAI_KEY } }, {
      token: account.token
    })
    const moved = await api.put(PATH, {
      llm: { provider: "openai", model: "llama3.1", base_url: "http://127.0.0.1:11434/v1" }
    }, { token: account.token })
    expect(moved.status).toBe(200)
    expect(moved.body.llm).toEqual({
      provider: "openai",
      model: "llama3.1",
      base_url: "http://127.0.0.1:11434/v1",
      api_key: null,
      api_key_set: false
    })
    const llm = await decryptedLlm(account.organizationId)
    expect(Option.isSome(llm) && llm.value.apiKey).toBeNull()

    const masked = await api.put(PATH, {
      llm: { provider: "openai", model: "llama3.1", base_url: "http://localhost:8081/v1", api_key: "****WXYZ" }
    }, { token: account.token })
    expect(masked.status).toBe(422)
    expect(masked.body.detail[0].loc).toEqual(["body", "llm", "api_key"])
  })

  it("requires a key for the OpenAI API itself but not for a keyless local endpoint", async () => {
    const account = await newAccount(api)
    const missing = await api.put(PATH, { llm: { provider: "openai", model: "gpt-4o-mini" } }, { token: account.token })
    expect(missing.status).toBe(422)
    expect(missing.body.detail).toEqual([{
      loc: ["body", "llm", "api_key"],
      msg: expect.stringMatching(/api_key is required/),
      type: "value_error"
    }])
    const local = await api.put(PATH, {
      llm: { provider: "openai", model: "qwen2.5", base_url: "http://127.0.0.1:8080/v1" }
    }, { token: account.token })
    expect(local.status).toBe(200)
  })

  it("validates providers and URLs in FastAPI's 422 shape", async () => {
    const account = await newAccount(api)
    const reply = await api.put(PATH, {
      llm: { provider: "anthropic", model: "", base_url: "ftp://x" },
      tts: { provider: "Eleven Labs!" }
    }, { token: account.token })
    expect(reply.status).toBe(422)
    expect(reply.body.detail.map((problem: any) => problem.loc)).toEqual([
      ["body", "llm", "provider"],
      ["body", "llm", "model"],
      ["body", "llm", "base_url"],
      ["body", "tts", "provider"]
    ])
    expect((await api.get(PATH, { token: account.token })).body.llm).toBeNull()
  })

  it("keeps omitted sections and masks speech keys too", async () => {
    const account = await newAccount(api)
    await api.put(PATH, {
      llm: { provider: "openai", model: "gpt-4o-mini", api_key: OPENAI_KEY },
      stt: { provider: "deepgram", model: "nova-3", api_key: "dg-secret-key-000111", language: "en" },
      tts: { provider: "elevenlabs", api_key: "el-secret-key-222333", voice: "Rachel" }
    }, { token: account.token })
    const partial = await api.put(PATH, { tts: { provider: "elevenlabs", voice: "Adam" } }, { token: account.token })
    expect(partial.body.llm.model).toBe("gpt-4o-mini")
    expect(partial.body.stt).toEqual({
      provider: "deepgram",
      model: "nova-3",
      base_url: null,
      api_key: "****0111",
      api_key_set: true,
      voice: null,
      language: "en"
    })
    expect(partial.body.tts).toEqual({
      provider: "elevenlabs",
      model: null,
      base_url: null,
      api_key: "****2333",
      api_key_set: true,
      voice: "Adam",
      language: null
    })
    const speech = await server.run(
      Effect.flatMap(ModelSettings, (settings) => settings.speechFor(account.organizationId, "stt"))
    )
    expect(Option.isSome(speech) && speech.value.apiKey).toBe("dg-secret-key-000111")
  })

  it("keeps each organization's settings to itself", async () => {
    const owner = await newAccount(api, "owner")
    const other = await newAccount(api, "other")
    await api.put(PATH, { llm: { provider: "openai", model: "gpt-4o-mini", api_key: OPENAI_KEY } }, {
      token: owner.token
    })
    expect((await api.get(PATH, { token: other.token })).body.llm).toBeNull()
    await api.put(PATH, { llm: { provider: "openai", model: "other-model", base_url: "http://127.0.0.1:1/v1" } }, {
      token: other.token
    })
    expect((await api.get(PATH, { token: owner.token })).body.llm.model).toBe("gpt-4o-mini")
  })

  it("requires credentials, agents:read to read and agents:write to change", async () => {
    const account = await newAccount(api)
    expect((await api.get(PATH)).status).toBe(401)
    const reader = await newApiKey(api, account, ["agents:read"])
    expect((await api.get(PATH, { apiKey: reader })).status).toBe(200)
    const refused = await api.put(PATH, { llm: { provider: "openai", model: "m", api_key: OPENAI_KEY } }, {
      apiKey: reader
    })
    expect(refused.status).toBe(403)
    const writer = await newApiKey(api, account, ["agents:write"])
    expect(
      (await api.put(PATH, { llm: { provider: "openai", model: "m", api_key: OPENAI_KEY } }, { apiKey: writer })).status
    ).toBe(200)
  })
})
