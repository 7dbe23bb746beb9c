import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type LoopbackApi, startLoopbackApi } from "./support/loopbackApi.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let target: LoopbackApi
const logLines: Array<string> = []

beforeAll(async () => {
  // Every log line the server writes, at the most verbose level, to search for secrets.
  vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
    logLines.push(args.map(String).join(" "))
  })
  target = await startLoopbackApi()
  server = await startServer({ LOG_LEVEL: "debug" })
  api = client(server.url)
})

afterAll(async () => {
  await server?.close()
  await target?.close()
  vi.restoreAllMocks()
})

const TOOLS = "/api/v1/tools"
const SECRET = "very-secret-bearer-token-5150"

const createTool = async (account: TestAccount, config: Record<string, unknown>, name = "Look up order") => {
  const created = await api.post(TOOLS, { name, definition: { type: "http_api", config } }, { token: account.token })
  if (created.status !== 200) throw new Error(`tool creation failed: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body.tool_uuid as string
}

const runTest = (account: TestAccount, uuid: string, body: Record<string, unknown>) =>
  api.post(`${TOOLS}/${uuid}/test`, body, { token: account.token })

const bearer = async (account: TestAccount, token = SECRET, host?: string) => {
  const created = await api.post("/api/v1/credentials", {
    name: `Bearer ${Math.random()}`,
    credential_type: "bearer_token",
    credential_data: { token },
    ...(host ? { host } : {})
  }, { token: account.token })
  expect(created.status).toBe(200)
  return created.body.uuid as string
}

describe("HTTP API tools", () => {
  it("builds the request from the URL template, the query and the arguments, and gives the model the pointed-at part", async () => {
    const account = await newAccount(api, "http")
    const uuid = await createTool(account, {
      method: "GET",
      url: `${target.url}/orders/{{order_id}}`,
      headers: { "X-Source": "talkgraph" },
      parameters: [
        { name: "order_id", type: "string", description: "The order number" },
        { name: "verbose", type: "boolean", description: "More detail", required: false }
      ],
      response_pointer: "/order/status"
    })
    const before = target.requests.length
    const tested = await runTest(account, uuid, { llm_params: { order_id: "A 17/x", verbose: true } })
    expect(tested.status).toBe(200)
    const made = target.requests[before]!
    expect(made.path).toBe("/orders/A%2017%2Fx")
    expect(made.query).toEqual({ verbose: "true" })
    expect(made.headers["x-source"]).toBe("talkgraph")
    expect(tested.body).toMatchObject({
      status: "success",
      status_code: 200,
      result: "shipped",
      truncated: false,
      request_method: "GET",
      request_url: `${target.url}/orders/A%2017%2Fx?verbose=true`
    })
    expect(tested.body.data.order).toEqual({ id: "A 17/x", status: "shipped", eta: "tomorrow" })
  })

  it("sends a JSON body from body_template with each value's type kept, presets included", async () => {
    const account = await newAccount(api, "http")
    const uuid = await createTool(account, {
      method: "post",
      url: `${target.url}/bookings`,
      parameters: [
        { name: "day", type: "string", description: "Day" },
        { name: "guests", type: "number", description: "How many" }
      ],
      preset_parameters: [{ name: "phone", type: "string", value_template: "{{initial_context.phone}}" }],
      body_template: {
        booking: { day: "{{day}}", guests: "{{guests}}", note: "for {{guests}} people" },
        phone: "{{phone}}"
      }
    }, "Book table")
    const before = target.requests.length
    const tested = await runTest(account, uuid, {
      llm_params: { day: "Friday", guests: 4 },
      preset_params: { phone: "+15550001111" }
    })
    expect(tested.body.status).toBe("success")
    expect(tested.body.status_code).toBe(201)
    expect(target.requests[before]!.body).toEqual({
      booking: { day: "Friday", guests: 4, note: "for 4 people" },
      phone: "+15550001111"
    })
    expect(target.requests[before]!.headers["content-type"]).toBe("application/json")
  })

  it("refuses arguments that do not fit the parameters' JSON Schema before sending anything", async () => {
    const account = await newAccount(api, "http")
    const uuid = await createTool(account, {
      method: "GET",
      url: `${target.url}/orders/{{order_id}}`,
      parameters: [{ name: "order_id", type: "string", description: "The order number" }]
    })
    const before = target.requests.length
    const missing = await runTest(account, uuid, { llm_params: {} })
    const wrongType = await runTest(account, uuid, { llm_params: { order_id: 42, extra: "x" } })
    expect(target.requests.length).toBe(before)
    expect(missing.body.status).toBe("error")
    expect(missing.body.error).toContain("\"order_id\" is required")
    expect(wrongType.body.error).toContain("\"order_id\" must be a string, not number")
    expect(wrongType.body.error).toContain("\"extra\" is not a parameter of this tool")
    expect(missing.body.request_url).toBeNull()
    // A value cannot climb out of its path segment to another endpoint of the host.
    for (const climb of ["..", ".", "%2e%2E"]) {
      const climbed = await runTest(account, uuid, { llm_params: { order_id: climb } })
      expect(climbed.body.status).toBe("error")
      expect(climbed.body.error).toContain("cannot stand in a URL path")
    }
    expect(target.requests.length).toBe(before)
  })

  it("gives up at the tool's timeout and says so", async () => {
    const account = await newAccount(api, "http")
    const uuid = await createTool(account, {
      method: "GET",
      url: `${target.url}/slow`,
      parameters: [{ name: "ms", type: "number", description: "delay" }],
      timeout_ms: 300
    })
    const started = Date.now()
    const tested = await runTest(account, uuid, { llm_params: { ms: 5000 } })
    expect(Date.now() - started).toBeLessThan(3000)
    expect(tested.body.status).toBe("error")
    expect(tested.body.error).toBe("the API did not answer within 300 ms")
    expect(tested.body.duration_ms).toBeGreaterThanOrEqual(290)
  })

  it("reads at most 5 MB of an answer and tells the model its result was cut", async () => {
    const account = await newAccount(api, "http")
    const uuid = await createTool(account, { method: "GET", url: `${target.url}/huge`, max_result_chars: 1000 })
    const tested = await runTest(account, uuid, {})
    expect(tested.body.status).toBe("success")
    expect(tested.body.truncated).toBe(true)
    expect(tested.body.result).toContain("only the first 1000 are shown")
    expect(tested.body.result).toContain("larger than 5 MB")
    expect(tested.body.data).toBeNull()
  })

  it("answers an error status as an error the model can talk about", async () => {
    const account = await newAccount(api, "http")
    const uuid = await createTool(account, { method: "GET", url: `${target.url}/fail` })
    const tested = await runTest(account, uuid, {})
    expect(tested.body.status).toBe("error")
    expect(tested.body.status_code).toBe(500)
    expect(tested.body.result).toBe("Error: the API answered HTTP 500: {\"error\":\"database down\"}")
  })
})

describe("credentials on tool requests", () => {
  it("puts each kind of credential on the request, and never shows or logs a secret", async () => {
    const account = await newAccount(api, "cred")
    const kinds = [
      {
        credential_type: "bearer_token",
        credential_data: { token: SECRET },
        header: "authorization",
        value: `Bearer ${SECRET}`
      },
      {
        credential_type: "basic_auth",
        credential_data: { username: "ada", password: "basic-password-4242" },
        header: "authorization",
        value: `Basic ${Buffer.from("ada:basic-password-4242").toString("base64")}`
      },
      {
        credential_type: "api_key",
        credential_data: { header_name: "X-Api-Key", api_key: "api-key-value-7777" },
        header: "x-api-key",
        value: "api-key-value-7777"
      },
      {
        credential_type: "custom_header",
        credential_data: { header_name: "X-Token", header_value: "custom-value-8888" },
        header: "x-token",
        value: "custom-value-8888"
      }
    ]
    for (const kind of kinds) {
      const credential = await api.post("/api/v1/credentials", {
        name: kind.credential_type,
        credential_type: kind.credential_type,
        credential_data: kind.credential_data
      }, { token: account.token })
      expect(credential.status).toBe(200)
      const uuid = await createTool(
        account,
        { method: "GET", url: `${target.url}/echo`, credential_uuid: credential.body.uuid },
        `echo ${kind.credential_type}`
      )
      const before = target.requests.length
      const tested = await runTest(account, uuid, {})
      expect(target.requests[before]!.headers[kind.header]).toBe(kind.value)
      const shown = JSON.stringify(tested.body)
      for (const secret of Object.values(kind.credential_data)) {
        if (secret !== "ada" && !secret.startsWith("X-")) expect(shown).not.toContain(secret)
      }
      expect(shown).not.toContain(kind.value)
      const headerShown = Object.entries(tested.body.request_headers).find(([name]) =>
        name.toLowerCase() === kind.header
      )
      expect(headerShown?.[1]).toMatch(/^\*\*\*\*/)
      const read = await api.get(`${TOOLS}/${uuid}`, { token: account.token })
      expect(JSON.stringify(read.body)).not.toContain(kind.value)
    }
    const logged = logLines.join("\n")
    expect(logged).toContain("Tool call")
    for (const kind of kinds) {
      expect(logged).not.toContain(kind.value)
      for (const secret of Object.values(kind.credential_data)) {
        if (secret.length > 10 && !secret.startsWith("X-")) expect(logged).not.toContain(secret)
      }
    }
  })

  it("never lets a stored credential follow a changed URL host, until its secret is sent again", async () => {
    const account = await newAccount(api, "host")
    const credential = await bearer(account, "host-bound-secret-0001")
    const uuid = await createTool(account, {
      method: "GET",
      url: `${target.url}/orders/{{order_id}}`,
      parameters: [{ name: "order_id", type: "string", description: "id" }],
      credential_uuid: credential
    })
    const bound = await api.get(`/api/v1/credentials/${credential}`, { token: account.token })
    expect(bound.body.bound_host).toBe(target.host)

    const port = new URL(target.url).port
    const moved = {
      definition: {
        type: "http_api",
        config: { method: "GET", url: `http://localhost:${port}/orders/{{order_id}}`, credential_uuid: credential }
      }
    }
    const refused = await api.put(`${TOOLS}/${uuid}`, moved, { token: account.token })
    expect(refused.status).toBe(422)
    expect(refused.body.detail[0].loc).toEqual(["body", "definition", "config", "credential_uuid"])
    expect(refused.body.detail[0].msg).toContain("never follows a changed host")
    // Another tool pointing elsewhere cannot borrow it either.
    const borrowed = await api.post(TOOLS, { name: "Elsewhere", ...moved }, { token: account.token })
    expect(borrowed.status).toBe(422)
    // Moving the binding without the secret is refused; with the secret sent again it is allowed.
    const maskOnly = await api.put(`/api/v1/credentials/${credential}`, { host: `localhost:${port}` }, {
      token: account.token
    })
    expect(maskOnly.status).toBe(422)
    const resent = await api.put(`/api/v1/credentials/${credential}`, {
      credential_data: { token: "host-bound-secret-0002" },
      host: `localhost:${port}`
    }, { token: account.token })
    expect(resent.status).toBe(200)
    expect(resent.body.bound_host).toBe(`localhost:${port}`)
    const accepted = await api.put(`${TOOLS}/${uuid}`, moved, { token: account.token })
    expect(accepted.status).toBe(200)
  })
})

describe("built-in tools", () => {
  it("calculates without eval, and tells the current time in a zone", async () => {
    const account = await newAccount(api, "builtin")
    const calculator = await api.post(TOOLS, { name: "Calculate", definition: { type: "calculator" } }, {
      token: account.token
    })
    expect(calculator.body.category).toBe("calculator")
    const sum = await runTest(account, calculator.body.tool_uuid, {
      llm_params: { expression: "round((12.5 * 3 + 4) / 3, 2) + 2^3" }
    })
    expect(sum.body).toMatchObject({ status: "success", data: { result: 21.83 } })
    const injected = await runTest(account, calculator.body.tool_uuid, {
      llm_params: { expression: "process.exit(1)" }
    })
    expect(injected.body.status).toBe("error")
    expect(injected.body.error).toContain("unexpected \".\"")
    const inherited = await runTest(account, calculator.body.tool_uuid, {
      llm_params: { expression: "constructor(1)" }
    })
    expect(inherited.body.error).toContain("unknown name \"constructor\"")

    const clock = await api.post(TOOLS, {
      name: "Current time",
      definition: { type: "current_time", config: { timezone: "Asia/Tokyo" } }
    }, { token: account.token })
    const time = await runTest(account, clock.body.tool_uuid, {})
    expect(time.body.status).toBe("success")
    expect(time.body.data.timezone).toBe("Asia/Tokyo")
    expect(time.body.data.local_time).toMatch(/GMT\+9/)
    const badZone = await api.post(TOOLS, {
      name: "Bad time",
      definition: { type: "current_time", config: { timezone: "Mars/Olympus" } }
    }, { token: account.token })
    expect(badZone.status).toBe(422)
  })
})
