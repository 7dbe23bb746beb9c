import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type RunningServer, startServer, uniqueEmail } from "./support/server.ts"
import { uploadCsv } from "./support/uploads.ts"

let server: RunningServer
let api: Client
let account: TestAccount

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
  account = await newAccount(api)
})

const json = (body: string) => ({ rawBody: body, token: account.token })

const MiB = 1024 * 1024

interface RawReply {
  readonly status?: number
  readonly body?: string
  readonly error?: string
  readonly sentBytes: number
}

/**
 * Sends a body of `declaredBytes` (Content-Length) or an endless chunked body, writing it only as
 * fast as the server reads it, and reports how the server answered or cut the connection.
 */
const sendLargeBody = (path: string, options: { declaredBytes?: number; headers?: Record<string, string> }) =>
  new Promise<RawReply>((resolve) => {
    const url = new URL(path, server.url)
    let sentBytes = 0
    const request = http.request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(options.declaredBytes === undefined
          ? { "transfer-encoding": "chunked" }
          : { "content-length": String(options.declaredBytes) }),
        ...options.headers
      }
    })
    const chunk = Buffer.alloc(64 * 1024, "a")
    const settle = (reply: Omit<RawReply, "sentBytes">) => {
      request.destroy()
      resolve({ ...reply, sentBytes })
    }
    request.on("response", (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (text) => (body += text))
      response.on("end", () => settle({ status: response.statusCode!, body }))
      response.on("error", (error) => settle({ status: response.statusCode!, error: error.message }))
    })
    request.on("error", (error: NodeJS.ErrnoException) => settle({ error: error.code ?? error.message }))
    const pump = () => {
      while (options.declaredBytes === undefined || sentBytes < options.declaredBytes) {
        sentBytes += chunk.length
        if (!request.write(chunk)) return void request.once("drain", pump)
      }
    }
    pump()
  })
afterAll(() => server?.close())

describe("no 5xx from bad input", () => {
  it("answers simultaneous signups with one email with one 200 and 409 for the others", async () => {
    const email = uniqueEmail("race")
    const replies = await Promise.all(
      Array.from(
        { length: 8 },
        (_, index) => api.post("/api/v1/auth/signup", { email, password: "race-password-1", name: `Racer ${index}` })
      )
    )
    const statuses = replies.map((reply) => reply.status).sort()
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409])
    expect((await api.post("/api/v1/auth/login", { email, password: "race-password-1" })).status).toBe(200)
  })

  it("refuses dates the database cannot store with 422 at decode, and takes the last storable day as an open end", async () => {
    const { token } = await newAccount(api)
    for (const date of ["0000-01-01", "0001-01-01T00:00:00%2B14:00", "9999-12-31T23:00:00-14:00"]) {
      const reply = await api.get(`/api/v1/organizations/usage/runs?start_date=${date}`, { token })
      expect(reply.status).toBe(422)
      expect(reply.body.detail).toEqual([
        { loc: ["query", "start_date"], msg: "must be between 0001-01-01 and 9999-12-31 (UTC)", type: "value_error" }
      ])
    }
    const everything = await api.get("/api/v1/organizations/usage/runs?start_date=0001-01-01&end_date=9999-12-31", {
      token
    })
    expect(everything.status).toBe(200)
    expect(everything.body.total_count).toBe(0)
    const days = await api.get("/api/v1/organizations/usage/daily-breakdown?end_date=9999-12-31", { token })
    expect(days.status).toBe(200)
  })

  it("refuses JSON nested deeper than 64 levels with 422, where it crashed the decoder's error formatting", async () => {
    const deep = `{"name":"deep","scopes":${"[".repeat(100_000)}${"]".repeat(100_000)}}`
    const reply = await api.post("/api/v1/user/api-keys", undefined, json(deep))
    expect(reply.status).toBe(422)
    expect(reply.body.detail).toEqual([
      {
        loc: ["body", "scopes", ...Array(63).fill(0)],
        msg: "JSON must not be nested more than 64 levels deep",
        type: "value_error"
      }
    ])
    const fine = `{"name":"nested but fine","scopes":["agents:read"],"extra":${"[".repeat(60)}${"]".repeat(60)}}`
    expect((await api.post("/api/v1/user/api-keys", undefined, json(fine))).status).toBe(200)
  })

  it("refuses multipart/form-data and other body types no endpoint reads with 415, in the v1 and v2 shapes", async () => {
    const form = new FormData()
    form.append("email", "someone@example.test")
    form.append("password", "whatever-password")
    const v1 = await fetch(`${server.url}/api/v1/auth/login`, { method: "POST", body: form })
    expect(v1.status).toBe(415)
    expect(await v1.json()).toEqual({
      detail: "Request bodies are application/json (or application/x-www-form-urlencoded), not multipart/form-data"
    })
    const v2 = await fetch(`${server.url}/api/v2/agents`, {
      method: "POST",
      body: form,
      headers: { authorization: `Bearer ${account.token}` }
    })
    expect(v2.status).toBe(415)
    expect(((await v2.json()) as any).error.code).toBe("unsupported_media_type")
    const text = await api.post("/api/v1/user/api-keys", undefined, {
      ...json("{\"name\":\"x\"}"),
      headers: { "content-type": "text/plain" }
    })
    expect(text.status).toBe(415)
    const empty = await fetch(`${server.url}/api/v1/auth/logout`, {
      method: "POST",
      headers: { "content-type": "text/plain", authorization: `Bearer ${(await newAccount(api)).token}` }
    })
    expect(empty.status).toBe(200)
  })

  it("refuses NUL characters in any string of a JSON or form body, query or path with 422 before they reach PostgreSQL", async () => {
    const inJson = await api.post("/api/v1/user/api-keys", undefined, json("{\"name\":\"before\\u0000after\"}"))
    expect(inJson.status).toBe(422)
    expect(inJson.body.detail).toEqual([{
      loc: ["body", "name"],
      msg: "Text must not contain NUL (\\u0000) characters",
      type: "value_error"
    }])
    const inKey = await api.post(
      "/api/v1/user/api-keys",
      undefined,
      json("{\"name\":\"k\",\"metadata\":{\"a\\u0000\":1}}")
    )
    expect(inKey.status).toBe(422)
    const login = await api.post("/api/v1/auth/login", undefined, {
      rawBody: "{\"email\":\"x\\u0000@example.test\",\"password\":\"whatever\"}"
    })
    expect(login.status).toBe(422)
    const inForm = await api.post("/api/v1/auth/login", undefined, {
      rawBody: "email=x%00%40example.test&password=whatever",
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expect(inForm.status).toBe(422)
    expect(inForm.body.detail[0].loc).toEqual(["body", "email"])
    const inQuery = await api.get("/api/v1/workflow/fetch?status=active%00", { token: account.token })
    expect(inQuery.status).toBe(422)
    expect(inQuery.body.detail[0].loc).toEqual(["query", "status"])
    expect((await api.get("/api/v1/workflow/fetch/1%00", { token: account.token })).status).toBe(422)
    const filters = encodeURIComponent(
      JSON.stringify([{ attribute: "callerNumber", type: "text", value: { value: "555\u0000" } }])
    )
    const inFilters = await api.get(`/api/v1/organizations/usage/runs?filters=${filters}`, { token: account.token })
    expect(inFilters.status).toBe(422)
    expect(inFilters.body.detail[0].msg).toBe("filters[0].value.value: Text must not contain NUL (\\u0000) characters")
  })

  it("refuses unpaired UTF-16 surrogates with 422 instead of storing U+FFFD in their place", async () => {
    const signup = await api.post("/api/v1/auth/signup", undefined, {
      rawBody: `{"email":"${uniqueEmail("surrogate")}","password":"surrogate-pass-1","name":"Ada \\ud83d Lovelace"}`
    })
    expect(signup.status).toBe(422)
    expect(signup.body.detail).toEqual([
      {
        loc: ["body", "name"],
        msg: "Text must not contain unpaired UTF-16 surrogates (invalid Unicode)",
        type: "value_error"
      }
    ])
    const paired = await api.post("/api/v1/auth/signup", {
      email: uniqueEmail("emoji"),
      password: "surrogate-pass-1",
      name: "Ada 🚀"
    })
    expect(paired.status).toBe(200)
    expect(paired.body.user.name).toBe("Ada 🚀")
  })

  it("refuses numbers a bigint cannot hold exactly (1e400 reads as Infinity) with 422", async () => {
    const reply = await api.post("/api/v1/user/api-keys", undefined, json("{\"name\":\"n\",\"expires_in_days\":1e400}"))
    expect(reply.status).toBe(422)
    expect(reply.body.detail[0]).toMatchObject({ loc: ["body", "expires_in_days"], type: "value_error" })
  })
})

describe("work a request can cause", () => {
  it("refuses an array of more than 1000 items with one problem, where each wrong item cost a problem per allowed value", async () => {
    const scopes = JSON.stringify(Array(5000).fill(1))
    const reply = await api.post("/api/v1/user/api-keys", undefined, json(`{"name":"many","scopes":${scopes}}`))
    expect(reply.status).toBe(422)
    expect(reply.body.detail).toEqual([{
      loc: ["body", "scopes"],
      msg: "Arrays must not hold more than 1000 items",
      type: "value_error"
    }])
  })
})

describe("request body limits", () => {
  it("refuses a body declared larger than its route takes with 413 before reading it, unauthenticated routes included", async () => {
    const login = await sendLargeBody("/api/v1/auth/login", { declaredBytes: 1024 * MiB })
    expect(login).toMatchObject({ status: 413 })
    expect(JSON.parse(login.body!)).toEqual({ detail: "Request body is larger than this endpoint takes (16 KiB)" })
    expect(login.sentBytes).toBeLessThan(64 * MiB)
    const callback = await sendLargeBody("/api/v1/telephony/twilio/status/1", { declaredBytes: 1024 * MiB })
    expect(callback).toMatchObject({ status: 413 })
    expect(JSON.parse(callback.body!).detail).toContain("64 KiB")
    const v2 = await sendLargeBody("/api/v2/agents", { declaredBytes: 2 * MiB })
    expect(v2).toMatchObject({ status: 413 })
    expect(JSON.parse(v2.body!).error.code).toBe("payload_too_large")
  })

  it("stops reading a chunked body once it passes the limit", async () => {
    const reply = await sendLargeBody("/api/v1/user/api-keys", {
      headers: { authorization: `Bearer ${account.token}` }
    })
    // Past the limit the server answers 413 or drops the connection; it never reads on.
    expect(reply.status === 413 || reply.error !== undefined).toBe(true)
    expect(reply.sentBytes).toBeLessThan(64 * MiB)
    expect((await api.get("/api/v1/health")).status).toBe(200)
  })

  it("gives each route its own limit: 1 MiB for the JSON API, 16 KiB for login and signup, 64 KiB for carrier callbacks", async () => {
    const name = "n".repeat(200 * 1024)
    const apiKey = await api.post("/api/v1/user/api-keys", { name }, { token: account.token })
    expect(apiKey.status).toBe(422)
    expect(apiKey.body.detail[0].loc).toEqual(["body", "name"])
    const signup = await api.post("/api/v1/auth/signup", { email: uniqueEmail("big"), password: "long-enough-1", name })
    expect(signup.status).toBe(413)
    const overMiB = await api.post("/api/v1/user/api-keys", { name: "n".repeat(MiB) }, { token: account.token })
    expect(overMiB.status).toBe(413)
    const callback = await fetch(`${server.url}/api/v1/telephony/twilio/status/999999999`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `CallStatus=completed&Pad=${"p".repeat(32 * 1024)}`
    })
    expect(callback.status).not.toBe(413)
    const bigCallback = await fetch(`${server.url}/api/v1/telephony/twilio/status/999999999`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `CallStatus=completed&Pad=${"p".repeat(65 * 1024)}`
    })
    expect(bigCallback.status).toBe(413)
  })

  it("leaves uploads to their signed URL's own cap: a 3 MiB CSV goes through", async () => {
    const rows = Array.from(
      { length: 150_000 },
      (_, index) => `+1555${String(index).padStart(7, "0")},Contact ${index}`
    )
    const csv = `phone_number,first_name\n${rows.join("\n")}\n`
    expect(csv.length).toBeGreaterThan(3 * MiB)
    expect(await uploadCsv(api, { token: account.token }, csv)).toMatch(/\.csv$/)
  })
})
