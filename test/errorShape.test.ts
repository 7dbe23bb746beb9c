import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { Effect, Layer, Logger, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HttpConflict } from "../http/errors.ts"
import { ErrorShapeLive } from "../http/errorShape.ts"
import { Conflict } from "../src/domain/errors.ts"
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

describe("v1 error bodies", () => {
  it("answers an unknown route with 404 {detail}", async () => {
    const reply = await api.get("/api/v1/no-such-thing")
    expect(reply.status).toBe(404)
    expect(reply.body).toEqual({ detail: "Not Found" })
  })

  it("answers malformed JSON with 422 json_invalid", async () => {
    const reply = await api.post("/api/v1/auth/login", undefined, { rawBody: "{\"email\": " })
    expect(reply.status).toBe(422)
    expect(reply.body).toEqual({ detail: [{ loc: ["body"], msg: "JSON decode error", type: "json_invalid" }] })
  })

  it("reports every wrong type at once with its location", async () => {
    const reply = await api.post("/api/v1/auth/signup", { email: true, password: 12345678, name: ["x"] })
    expect(reply.status).toBe(422)
    expect(reply.body.detail).toEqual([
      { loc: ["body", "email"], msg: expect.any(String), type: "string_type" },
      { loc: ["body", "password"], msg: expect.any(String), type: "string_type" },
      { loc: ["body", "name"], msg: expect.any(String), type: "string_type" }
    ])
  })

  it("tags every response with a request id, echoing the caller's", async () => {
    const mine = await api.get("/api/v1/health", { headers: { "x-request-id": "trace-me-123" } })
    expect(mine.headers.get("x-request-id")).toBe("trace-me-123")
    const generated = await api.get("/api/v1/health")
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe("quoting rejected values in 422s", () => {
  it("never sends a credential field's value back: an over-long password or carrier token", async () => {
    const password = `pw-${"p".repeat(1100)}`
    const signup = await api.post("/api/v1/auth/signup", { email: "quote-me@example.test", password, name: "x" })
    expect(signup.status).toBe(422)
    expect(signup.body.detail).toEqual([
      { loc: ["body", "password"], msg: "Password must be at most 1024 characters", type: "value_error" }
    ])
    const short = await api.post("/api/v1/auth/signup", { email: "quote-me@example.test", password: "pw-1234" })
    expect(JSON.stringify(short.body)).not.toContain("pw-1234")

    const account = await newAccount(api)
    const token = `tok-${"t".repeat(9000)}`
    const config = await api.post(
      "/api/v1/organizations/telephony-configs",
      { name: "quoted", config: { provider: "twilio", account_sid: "AC1", auth_token: token } },
      { token: account.token }
    )
    expect(config.status).toBe(422)
    expect(JSON.stringify(config.body)).not.toContain("tok-")
  })

  it("quotes at most a short excerpt of any other value, and no object or whole body", async () => {
    const name = "n".repeat(10_000)
    const long = await api.post("/api/v1/auth/signup", {
      email: "excerpt@example.test",
      password: "long-enough-1",
      name
    })
    expect(long.status).toBe(422)
    expect(long.body.detail).toEqual([
      {
        loc: ["body", "name"],
        msg: `Expected a string at most 200 character(s) long, actual "${"n".repeat(31)}…"`,
        type: "value_error"
      }
    ])
    const nested = await api.post("/api/v1/auth/login", { email: { password: "hidden-in-object" }, password: "x" })
    expect(nested.status).toBe(422)
    expect(nested.body.detail[0]).toEqual({ loc: ["body", "email"], msg: "Expected string", type: "string_type" })
    const whole = await api.post("/api/v1/auth/login", "password=whole-body-secret")
    expect(whole.status).toBe(422)
    expect(JSON.stringify(whole.body)).not.toContain("whole-body-secret")
  })
})

describe("v2 error bodies", () => {
  it("uses the error envelope for unknown routes and validation failures", async () => {
    const account = await newAccount(api)
    const key = await newApiKey(api, account)
    const unknown = await api.get("/api/v2/nothing-here", { apiKey: key })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ error: { code: "not_found", message: "Not Found" } })
  })
})

describe("OpenAPI", () => {
  it("serves the document with both security schemes and the real error bodies", async () => {
    const reply = await api.get("/openapi.json")
    expect(reply.status).toBe(200)
    const spec = reply.body
    expect(Object.keys(spec.components.securitySchemes).sort()).toEqual(["apiKey", "bearer"])
    expect(spec.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", in: "header", name: "X-API-Key" })
    const login = spec.paths["/api/v1/auth/login"].post
    expect(login.responses["400"]).toBeUndefined()
    expect(login.responses["422"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/HTTPValidationError"
    )
    expect(login.responses["401"].content["application/json"].schema.$ref).toBe("#/components/schemas/HTTPError")
    const status = spec.paths["/api/v2/status"].get
    expect(status.responses["401"].content["application/json"].schema.$ref).toBe("#/components/schemas/ErrorResponse")
    expect(status.security).toEqual([{ bearer: [] }, { apiKey: [] }])
    expect(spec.components.schemas.V2_ServiceStatus).toBeDefined()
  })

  it("serves interactive docs", async () => {
    const reply = await fetch(`${server.url}/docs`)
    expect(reply.status).toBe(200)
    expect(await reply.text()).toContain("swagger")
  })
})

describe("error shaping in isolation", () => {
  class ProbeApi extends HttpApi.make("probe").add(
    HttpApiGroup.make("probe")
      .add(HttpApiEndpoint.get("boom", "/api/v1/boom").addSuccess(Schema.String))
      .add(HttpApiEndpoint.get("busy", "/api/v2/busy").addSuccess(Schema.String).addError(HttpConflict))
      .add(
        HttpApiEndpoint.get("mediaBoom", "/api/v1/telephony/twilio/media/5/:token").setPath(
          Schema.Struct({ token: Schema.String })
        ).addSuccess(Schema.String)
      )
  ) {}
  const ProbeLive = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
    handlers
      .handle("boom", () => Effect.die(new Error("secret internals at /srv/app.ts:42")))
      .handle("busy", () => Effect.fail(new Conflict({ message: "Campaign is running" })))
      .handle("mediaBoom", () => Effect.die(new Error("media handler failed"))))
  const logged: Array<string> = []
  const capture = Logger.replace(
    Logger.defaultLogger,
    Logger.make((entry) => void logged.push(Logger.jsonLogger.log(entry)))
  )
  const { dispose, handler } = HttpApiBuilder.toWebHandler(
    Layer.mergeAll(
      HttpApiBuilder.api(ProbeApi).pipe(Layer.provide(ProbeLive), Layer.provide(ErrorShapeLive)),
      HttpServer.layerContext,
      capture
    )
  )
  afterAll(() => dispose())

  it("turns a defect into a bare 500 without internals", async () => {
    const response = await handler(new Request("http://local/api/v1/boom"))
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(JSON.parse(text)).toEqual({ detail: "Internal Server Error" })
    expect(text).not.toContain("secret internals")
  })

  it("logs a failed request's path without its query string, where a signed upload's signature travels", async () => {
    logged.length = 0
    const response = await handler(new Request("http://local/api/v1/boom?key=k&signature=upload-signature-31337"))
    expect(response.status).toBe(500)
    const failure = logged.map((line) => JSON.parse(line)).find((entry) =>
      entry.message === "Unhandled failure while serving a request"
    )
    expect(failure?.annotations).toMatchObject({ path: "/api/v1/boom", method: "GET" })
    expect(logged.join("\n")).not.toContain("upload-signature-31337")
  })

  it("logs a defect's request path without its query string and without a media stream's token", async () => {
    logged.length = 0
    const response = await handler(
      new Request("http://local/api/v1/telephony/twilio/media/5/1900000000.pathTokenSignature42?sig=querySignature42")
    )
    expect(response.status).toBe(500)
    const line = logged.find((text) => text.includes("Unhandled failure while serving a request"))
    expect(JSON.parse(line!).annotations).toMatchObject({ path: "/api/v1/telephony/twilio/media/5/[token]" })
    expect(logged.join("\n")).not.toMatch(/pathTokenSignature42|querySignature42/)
  })

  it("maps a domain conflict to 409 in the v2 envelope", async () => {
    const response = await handler(new Request("http://local/api/v2/busy"))
    expect(response.status).toBe(409)
    expect(await response.json()).toEqual({ error: { code: "conflict", message: "Campaign is running" } })
  })
})
