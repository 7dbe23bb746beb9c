import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { createWorkflow, salesDefinition, useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

/**
 * The server may reach 127.0.0.2 only (where the "provider" stand-ins listen). 127.0.0.1, where
 * `localhost` resolves, stands for an internal service: a stand-in there records whatever reaches
 * it, which must be nothing.
 */
const ALLOWED_HOST = "127.0.0.2"

let server: RunningServer
let api: Client
let provider: ScriptedLlm
let internal: ScriptedLlm
let redirector: http.Server
let redirectorUrl: string

const listen = async (handler: http.RequestListener, host: string) => {
  const standIn = http.createServer(handler)
  await new Promise<void>((resolve) => standIn.listen(0, host, resolve))
  return { standIn, url: `http://${host}:${(standIn.address() as AddressInfo).port}` }
}

beforeAll(async () => {
  provider = await startScriptedLlm({ host: ALLOWED_HOST })
  internal = await startScriptedLlm()
  const internalPort = new URL(internal.baseUrl).port // An allowed host that sends every request on to the internal one.
  ;({ standIn: redirector, url: redirectorUrl } = await listen((request, response) => {
    request.resume()
    response.writeHead(307, { location: `http://127.0.0.1:${internalPort}${request.url}` })
    response.end()
  }, ALLOWED_HOST))
  server = await startServer({ TALKGRAPH_OUTBOUND_ALLOW: `${ALLOWED_HOST}/32` })
  api = client(server.url)
})

afterAll(async () => {
  await server?.close()
  await provider?.close()
  await internal?.close()
  redirector?.close()
})

const MODELS = "/api/v1/organizations/model-configurations"
const CARRIERS = "/api/v1/organizations/telephony-configs"
const TWILIO = { provider: "twilio", account_sid: "AC0123456789abcdef", auth_token: "secret-auth-token-123456" }

/** Points the organization's LLM at `baseUrl` as if it had passed the checks when saved (a name that resolved elsewhere then). */
const storeLlmBaseUrl = (account: TestAccount, baseUrl: string) =>
  server.run(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE organization_model_settings SET llm = jsonb_set(llm, '{base_url}', to_jsonb(${baseUrl}::text))
        WHERE organization_id = ${account.organizationId}`)
  )

/** A chat whose first message goes to the LLM at `baseUrl`: the reply's status and detail, and the run's error. */
const chatThrough = async (baseUrl: string) => {
  const account = await newAccount(api, "outbound")
  await useLlm(api, account, provider.baseUrl)
  await storeLlmBaseUrl(account, baseUrl)
  const workflowId = await createWorkflow(api, server, account, salesDefinition())
  const sessions = `/api/v1/workflow/${workflowId}/text-chat/sessions`
  const session = await api.post(sessions, {}, { token: account.token })
  expect(session.status).toBe(200)
  const answer = await api.post(`${sessions}/${session.body.workflow_run_id}/messages`, { text: "Hello?" }, {
    token: account.token
  })
  const run = await api.get(`${sessions}/${session.body.workflow_run_id}`, { token: account.token })
  return { status: answer.status, detail: answer.body.detail, error: run.body.error }
}

describe("outbound requests to providers", () => {
  it("refuses base URLs at link-local and metadata addresses when they are saved, for models and carriers alike", async () => {
    const account = await newAccount(api, "outbound")
    const as = { token: account.token }
    const models = await api.put(MODELS, {
      llm: { provider: "openai", model: "m", base_url: "http://169.254.169.254/latest/meta-data" },
      stt: { provider: "openai", base_url: "http://[::ffff:169.254.169.254]/v1" },
      tts: { provider: "openai", base_url: "http://[fd00:ec2::254]/v1" }
    }, as)
    expect(models.status).toBe(422)
    expect(models.body.detail).toEqual([
      {
        loc: ["body", "llm", "base_url"],
        msg: expect.stringMatching(/link-local address .*never sends requests there/),
        type: "value_error"
      },
      { loc: ["body", "stt", "base_url"], msg: expect.stringMatching(/link-local address/), type: "value_error" },
      { loc: ["body", "tts", "base_url"], msg: expect.stringMatching(/cloud metadata address/), type: "value_error" }
    ])
    expect((await api.get(MODELS, as)).body).toMatchObject({ llm: null, stt: null, tts: null })

    for (const base of ["http://169.254.169.254", "http://0.0.0.0:8080", "http://100.100.100.200"]) {
      const carrier = await api.post(CARRIERS, { name: "Metadata", config: { ...TWILIO, api_base_url: base } }, as)
      expect(carrier.status, base).toBe(422)
      expect(carrier.body.detail[0].loc).toEqual(["body", "config", "api_base_url"])
    }
    const created = await api.post(
      CARRIERS,
      { name: "Allowed", config: { ...TWILIO, api_base_url: redirectorUrl } },
      as
    )
    expect(created.status).toBe(200)
    const moved = await api.put(`${CARRIERS}/${created.body.id}`, {
      config: { ...TWILIO, api_base_url: "http://169.254.169.254" }
    }, as)
    expect(moved.status).toBe(422)
    expect((await api.get(`${CARRIERS}/${created.body.id}`, as)).body.config.api_base_url).toBe(redirectorUrl)
  })

  it("refuses, when saved, an address the policy does not allow and a name that resolves to one", async () => {
    const account = await newAccount(api, "outbound")
    const direct = await api.put(MODELS, { llm: { provider: "openai", model: "m", base_url: internal.baseUrl } }, {
      token: account.token
    })
    expect(direct.status).toBe(422)
    expect(direct.body.detail[0].msg).toMatch(
      /127\.0\.0\.1 is a loopback address .*TALKGRAPH_OUTBOUND_ALLOW does not allow for model/
    )
    const named = await api.put(MODELS, {
      llm: { provider: "openai", model: "m", base_url: internal.baseUrl.replace("127.0.0.1", "localhost") }
    }, { token: account.token })
    expect(named.status).toBe(422)
    expect(named.body.detail[0].msg).toMatch(/localhost resolves to 127\.0\.0\.1/)
    const allowed = await api.put(MODELS, { llm: { provider: "openai", model: "m", base_url: provider.baseUrl } }, {
      token: account.token
    })
    expect(allowed.status).toBe(200)
  })

  it("refuses base URLs whose query string, fragment or credentials would change the paths requested under them", async () => {
    const account = await newAccount(api, "outbound")
    for (
      const base of [
        `${provider.baseUrl}?`,
        `${provider.baseUrl}?x=1`,
        `${provider.baseUrl}#`,
        provider.baseUrl.replace("http://", "http://user:pw@")
      ]
    ) {
      const models = await api.put(MODELS, { llm: { provider: "openai", model: "m", base_url: base } }, {
        token: account.token
      })
      expect(models.status, base).toBe(422)
      expect(models.body.detail[0].loc).toEqual(["body", "llm", "base_url"])
      const carrier = await api.post(CARRIERS, { name: "Paths", config: { ...TWILIO, api_base_url: base } }, {
        token: account.token
      })
      expect(carrier.status, base).toBe(422)
    }
  })

  it("checks the address a name resolves to when connecting, so a name that later points inside is refused (DNS rebinding)", async () => {
    internal.reset()
    const rebound = await chatThrough(internal.baseUrl.replace("127.0.0.1", "localhost"))
    expect(rebound.status).toBe(502)
    const literal = await chatThrough(internal.baseUrl)
    expect(literal.status).toBe(502)
    expect(internal.requests).toHaveLength(0)
  })

  it("does not follow a redirect from an allowed host to an internal one", async () => {
    internal.reset()
    const redirected = await chatThrough(`${redirectorUrl}/v1`)
    expect(redirected.status).toBe(502)
    // Structured generation (templates, extraction) went through a client that followed redirects anywhere.
    const account = await newAccount(api, "outbound")
    await useLlm(api, account, `${redirectorUrl}/v1`)
    const template = await api.post(
      "/api/v1/workflow/create/template",
      {
        call_type: "outbound",
        use_case: "Lead qualification",
        activity_description: "Call leads who asked for a demo."
      },
      { token: account.token }
    )
    expect(template.status).toBe(502)
    expect(internal.requests).toHaveLength(0)
  })

  it("tells the caller the same whatever the network said: refused, answered with a status, blocked or redirected", async () => {
    provider.reset()
    provider.enqueue(reply.error(404))
    const closedPort = await listen((_request, response) => response.end(), ALLOWED_HOST)
    closedPort.standIn.close()
    const outcomes = [
      await chatThrough(provider.baseUrl),
      await chatThrough(`${closedPort.url}/v1`),
      await chatThrough(internal.baseUrl),
      await chatThrough(`${redirectorUrl}/v1`)
    ]
    for (const outcome of outcomes) {
      expect(outcome.status).toBe(502)
      expect(outcome.detail).toBe(outcomes[0]!.detail)
      expect(outcome.error).toBe(outcomes[0]!.error)
    }
    expect(`${outcomes[0]!.detail} ${outcomes[0]!.error}`).not.toMatch(
      /HTTP|404|ECONN|refused|unreachable|rejected|blocked|redirect/i
    )
  })
})
