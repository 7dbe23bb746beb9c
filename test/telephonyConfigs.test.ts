import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { closedWindow, newTelephony, uploadCsv } from "./support/uploads.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  // Carriers' own APIs can only call a service back at a public address.
  server = await startServer({ PUBLIC_URL: "https://talkgraph.example.test" })
  api = client(server.url)
})
afterAll(() => server?.close())

const BASE = "/api/v1/organizations/telephony-configs"
const TWILIO = {
  provider: "twilio",
  account_sid: "AC11112222333344445555",
  auth_token: "tw-secret-token-abcd1234",
  amd_enabled: true
}

describe("telephony configurations", () => {
  it("creates a configuration, masks its secrets on every read and encrypts them at rest", async () => {
    const account = await newAccount(api)
    const as = { token: account.token }
    const created = await api.post(BASE, {
      name: "Twilio US",
      is_default_outbound: true,
      default_region: "us",
      config: TWILIO
    }, as)
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({
      name: "Twilio US",
      provider: "twilio",
      is_default_outbound: true,
      default_region: "US",
      phone_number_count: 0,
      is_ready_for_outbound: false,
      outbound_blocked_reason: "The configuration has no active phone number to call from",
      config: {
        provider: "twilio",
        account_sid: "AC11112222333344445555",
        auth_token: "****1234",
        amd_enabled: true,
        api_base_url: "https://api.twilio.com"
      }
    })
    const read = await api.get(`${BASE}/${created.body.id}`, as)
    expect(read.body.config.auth_token).toBe("****1234")
    expect(JSON.stringify(read.body)).not.toContain("tw-secret-token")

    const stored = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<
        { row: string }
      >`SELECT row_to_json(t)::text AS row FROM telephony_configurations t WHERE id = ${created.body.id}`
    }))
    expect(stored[0]!.row).not.toContain("tw-secret-token")
  })

  it("accepts every provider with its own fields and an api_base_url, and rejects missing ones", async () => {
    const account = await newAccount(api)
    const as = { token: account.token }
    const providers = [
      {
        provider: "vonage",
        api_key: "vk",
        api_secret: "vonage-secret-0001",
        application_id: "app-1",
        private_key: "-----BEGIN PRIVATE KEY-----xyz9"
      },
      {
        provider: "telnyx",
        api_key: "KEY-telnyx-000000001",
        connection_id: "conn-1",
        api_base_url: "http://127.0.0.1:9999"
      },
      { provider: "plivo", auth_id: "MA123", auth_token: "plivo-token-00000009" }
    ]
    for (const [index, config] of providers.entries()) {
      const reply = await api.post(BASE, { name: `Provider ${index}`, config }, as)
      expect(reply.status, JSON.stringify(reply.body)).toBe(200)
      expect(reply.body.provider).toBe(config.provider)
    }
    const list = await api.get(BASE, as)
    const telnyx = list.body.configurations.find((item: { provider: string }) => item.provider === "telnyx")
    expect(telnyx).toMatchObject({ phone_number_count: 0, is_default_outbound: false })
    const detail = await api.get(`${BASE}/${telnyx.id}`, as)
    expect(detail.body.config).toEqual({
      provider: "telnyx",
      api_key: "****0001",
      connection_id: "conn-1",
      api_base_url: "http://127.0.0.1:9999"
    })

    const missing = await api.post(BASE, { name: "Broken", config: { provider: "twilio", account_sid: "AC1" } }, as)
    expect(missing.status).toBe(422)
    const unknown = await api.post(BASE, { name: "Broken", config: { provider: "carrier-pigeon" } }, as)
    expect(unknown.status).toBe(422)
    const badUrl = await api.post(BASE, { name: "Broken", config: { ...TWILIO, api_base_url: "ftp://x" } }, as)
    expect(badUrl.status).toBe(422)
  })

  it("keeps one default outbound configuration and unique names per organization", async () => {
    const account = await newAccount(api)
    const as = { token: account.token }
    const first = await api.post(BASE, { name: "First", is_default_outbound: true, config: TWILIO }, as)
    const second = await api.post(BASE, { name: "Second", is_default_outbound: true, config: TWILIO }, as)
    const list = await api.get(BASE, as)
    const defaults = list.body.configurations.filter((item: { is_default_outbound: boolean }) =>
      item.is_default_outbound
    )
    expect(defaults.map((item: { id: number }) => item.id)).toEqual([second.body.id])
    expect(first.body.id).not.toBe(second.body.id)
    const duplicate = await api.post(BASE, { name: "first", config: TWILIO }, as)
    expect(duplicate.status).toBe(409)
    expect(duplicate.body.detail).toBe("A telephony configuration named \"first\" already exists")
  })

  it("updates with PUT, keeping secrets that come back masked or omitted while the endpoint stays the same", async () => {
    const account = await newAccount(api)
    const as = { token: account.token }
    const created = await api.post(BASE, { name: "Main", config: TWILIO }, as)
    const id = created.body.id
    const masked = await api.put(`${BASE}/${id}`, {
      name: "Main edge",
      config: { ...created.body.config, amd_enabled: false }
    }, as)
    expect(masked.status).toBe(200)
    expect(masked.body).toMatchObject({
      name: "Main edge",
      config: { amd_enabled: false, auth_token: "****1234", api_base_url: "https://api.twilio.com" }
    })
    const omitted = await api.put(
      `${BASE}/${id}`,
      { config: { account_sid: TWILIO.account_sid, amd_enabled: true } },
      as
    )
    expect(omitted.body.config).toMatchObject({ amd_enabled: true, auth_token: "****1234" })
    const edge = await api.put(`${BASE}/${id}`, {
      config: { ...TWILIO, api_base_url: "https://api.dublin.ie1.twilio.com" }
    }, as)
    expect(edge.body.config).toMatchObject({
      auth_token: "****1234",
      api_base_url: "https://api.dublin.ie1.twilio.com"
    })
    const rotated = await api.put(`${BASE}/${id}`, {
      config: { account_sid: "AC999", auth_token: "rotated-token-zzzz9876" }
    }, as)
    expect(rotated.body.config).toMatchObject({ account_sid: "AC999", auth_token: "****9876" })
    const switched = await api.put(`${BASE}/${id}`, { config: { provider: "plivo", auth_id: "MA1" } }, as)
    expect(switched.status).toBe(422)
    expect(switched.body.detail).toEqual([{
      loc: ["body", "config", "auth_token"],
      msg: "Field required",
      type: "missing"
    }])
  })

  it("never lets a stored secret follow a changed api_base_url or account: it must be sent again", async () => {
    const account = await newAccount(api)
    const as = { token: account.token }
    const created = await api.post(
      BASE,
      { name: "Main", config: { ...TWILIO, api_base_url: "http://127.0.0.1:9" } },
      as
    )
    const id = created.body.id
    const secretDetail = (
      name: string
    ) => [{
      loc: ["body", "config", name],
      msg: expect.stringMatching(/only kept while provider, account and api_base_url stay the same/),
      type: "value_error"
    }]

    // Someone who can only read the mask re-points the configuration at a host of theirs.
    const masked = await api.put(`${BASE}/${id}`, {
      config: { ...created.body.config, api_base_url: "http://127.0.0.1:8" }
    }, as)
    expect(masked.status).toBe(422)
    expect(masked.body.detail).toEqual(secretDetail("auth_token"))
    const omitted = await api.put(`${BASE}/${id}`, {
      config: { account_sid: TWILIO.account_sid, api_base_url: "http://127.0.0.1:8" }
    }, as)
    expect(omitted.status).toBe(422)
    expect(omitted.body.detail).toEqual(secretDetail("auth_token"))
    // Back to the provider's default API is a change of endpoint too.
    const toDefault = await api.put(`${BASE}/${id}`, { config: { account_sid: TWILIO.account_sid } }, as)
    expect(toDefault.status).toBe(422)
    const otherAccount = await api.put(`${BASE}/${id}`, {
      config: { ...created.body.config, account_sid: "AC-theirs" }
    }, as)
    expect(otherAccount.status).toBe(422)
    expect(otherAccount.body.detail).toEqual(secretDetail("auth_token"))

    const after = await api.get(`${BASE}/${id}`, as)
    expect(after.body.config).toMatchObject({
      account_sid: TWILIO.account_sid,
      auth_token: "****1234",
      api_base_url: "http://127.0.0.1:9"
    })
    const resent = await api.put(`${BASE}/${id}`, {
      config: { ...TWILIO, api_base_url: "http://127.0.0.1:8", auth_token: "new-token-for-the-new-host-5678" }
    }, as)
    expect(resent.status).toBe(200)
    expect(resent.body.config).toMatchObject({ auth_token: "****5678", api_base_url: "http://127.0.0.1:8" })

    const vonage = await api.post(BASE, {
      name: "Vonage",
      config: {
        provider: "vonage",
        api_key: "vk-1",
        api_secret: "vonage-secret-0001",
        application_id: "app-1",
        private_key: "-----BEGIN PRIVATE KEY-----xyz9",
        signature_secret: "sig-secret-000000042"
      }
    }, as)
    const moved = await api.put(`${BASE}/${vonage.body.id}`, {
      config: { ...vonage.body.config, application_id: "app-2" }
    }, as)
    expect(moved.status).toBe(422)
    expect(moved.body.detail.map((problem: { loc: Array<string> }) => problem.loc[2]).sort()).toEqual([
      "api_secret",
      "private_key",
      "signature_secret"
    ])
  })

  it("manages phone numbers: E.164 normalisation, one default caller ID, counts on the list", async () => {
    const account = await newAccount(api)
    const as = { token: account.token }
    const config = await api.post(BASE, { name: "Numbers", default_region: "GB", config: TWILIO }, as)
    const numbers = `${BASE}/${config.body.id}/phone-numbers`
    const first = await api.post(numbers, { address: "020 7946 0958", label: "London", is_default_caller_id: true }, as)
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({
      address: "+442079460958",
      label: "London",
      is_active: true,
      is_default_caller_id: true
    })
    const second = await api.post(numbers, { address: "+1 415 555 0199", is_default_caller_id: true }, as)
    expect(second.body.address).toBe("+14155550199")
    const sip = await api.post(numbers, { address: "sip:agent@pbx.example.com", is_active: false }, as)
    expect(sip.status).toBe(200)

    const listed = await api.get(numbers, as)
    expect(
      listed.body.phone_numbers.map((
        n: { address: string; is_default_caller_id: boolean }
      ) => [n.address, n.is_default_caller_id])
    ).toEqual([
      ["+442079460958", false],
      ["+14155550199", true],
      ["sip:agent@pbx.example.com", false]
    ])
    expect((await api.post(numbers, { address: "+442079460958" }, as)).status).toBe(409)
    expect((await api.post(numbers, { address: "hello" }, as)).status).toBe(422)

    const list = await api.get(BASE, as)
    expect(list.body.configurations[0]).toMatchObject({
      phone_number_count: 2,
      is_ready_for_outbound: true,
      outbound_blocked_reason: null
    })

    const deactivated = await api.put(`${numbers}/${second.body.id}`, { is_active: false, label: "Paused" }, as)
    expect(deactivated.body).toMatchObject({ is_active: false, label: "Paused" })
    expect((await api.delete(`${numbers}/${first.body.id}`, as)).body).toEqual({})
    expect((await api.delete(`${numbers}/${first.body.id}`, as)).status).toBe(404)
    expect((await api.get(BASE, as)).body.configurations[0]).toMatchObject({
      phone_number_count: 0,
      is_ready_for_outbound: false
    })
  })

  it("refuses to delete a configuration a running or paused campaign uses, then deletes it with {}", async () => {
    // Uploads go to PUBLIC_URL: this test needs a server that is where its PUBLIC_URL says.
    const local = await startServer()
    const api = client(local.url)
    const account = await newAccount(api)
    const as = { token: account.token }
    const telephonyId = await newTelephony(api, as)
    const workflowId = await insertWorkflow(local, account.organizationId)
    const sourceId = await uploadCsv(api, as, "phone_number\n+14155550101\n")
    const campaign = await api.post(
      "/api/v1/campaign/create",
      {
        name: "Uses it",
        workflow_id: workflowId,
        source_type: "csv",
        source_id: sourceId,
        schedule_config: closedWindow()
      },
      as
    )
    await api.post(`/api/v1/campaign/${campaign.body.id}/start`, undefined, as)

    const running = await api.delete(`${BASE}/${telephonyId}`, as)
    expect(running.status).toBe(409)
    expect(running.body.detail).toMatch(new RegExp(`running campaign ${campaign.body.id} \\("Uses it"\\)`))
    await api.post(`/api/v1/campaign/${campaign.body.id}/pause`, undefined, as)
    expect((await api.delete(`${BASE}/${telephonyId}`, as)).status).toBe(409)

    await api.post(`/api/v1/campaign/${campaign.body.id}/cancel`, undefined, as)
    const deleted = await api.delete(`${BASE}/${telephonyId}`, as)
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({})
    expect((await api.get(`${BASE}/${telephonyId}`, as)).status).toBe(404)
    const after = await api.get(`/api/v1/campaign/${campaign.body.id}`, as)
    expect(after.body.telephony_configuration_id).toBeNull()
    await local.close()
  })

  it("answers 404 on every endpoint for another organization's configuration", async () => {
    const owner = await newAccount(api)
    const intruder = await newAccount(api)
    const id = await newTelephony(api, { token: owner.token })
    const numbers = await api.get(`${BASE}/${id}/phone-numbers`, { token: owner.token })
    const numberId = numbers.body.phone_numbers[0].id
    const as = { token: intruder.token }
    const replies = await Promise.all([
      api.get(`${BASE}/${id}`, as),
      api.put(`${BASE}/${id}`, { name: "mine" }, as),
      api.delete(`${BASE}/${id}`, as),
      api.get(`${BASE}/${id}/phone-numbers`, as),
      api.post(`${BASE}/${id}/phone-numbers`, { address: "+14155550142" }, as),
      api.put(`${BASE}/${id}/phone-numbers/${numberId}`, { label: "x" }, as),
      api.delete(`${BASE}/${id}/phone-numbers/${numberId}`, as)
    ])
    expect(replies.map((reply) => reply.status)).toEqual(Array(7).fill(404))
    expect((await api.get(BASE, as)).body).toEqual({ configurations: [] })
    expect((await api.get(`${BASE}/${id}`, { token: owner.token })).status).toBe(200)
  })

  it("needs telephony:write to change configurations; campaigns:read may list them", async () => {
    const account = await newAccount(api)
    const reader = await newApiKey(api, account, ["campaigns:read"])
    expect((await api.get(BASE, { apiKey: reader })).status).toBe(200)
    const refused = await api.post(BASE, { name: "x", config: TWILIO }, { apiKey: reader })
    expect(refused.status).toBe(403)
    const usage = await newApiKey(api, account, ["usage:read"])
    expect((await api.get(BASE, { apiKey: usage })).status).toBe(403)
    const writer = await newApiKey(api, account, ["telephony:write"])
    expect((await api.post(BASE, { name: "x", config: TWILIO }, { apiKey: writer })).status).toBe(200)
  })
})
