import fc from "fast-check"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type Credential, describeCase, type FuzzCase, fuzzCases } from "./support/fuzzInputs.ts"
import { sendRaw } from "./support/rawHttp.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

/**
 * Every operation of the served OpenAPI document, so a new endpoint is fuzzed without touching
 * this file. WebSocket routes (the media streams) are not in the document: their upgrade and
 * frames are a protocol of their own, covered by the voice call tests.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_125)
const CASES_PER_OPERATION = 40
const CONCURRENT_OPERATIONS = 4

let server: RunningServer
let api: Client
let account: TestAccount
let apiKey: string
let knownIds: Array<number>
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
  account = await newAccount(api, "fuzz")
  apiKey = await newApiKey(api, account)
  // Real ids make some cases reach past the lookup, into the handlers' own checks.
  knownIds = [1, account.userId, account.organizationId, await insertWorkflow(server, account.organizationId)]
})
afterAll(async () => {
  agent.destroy()
  await server?.close()
})

/** A case may sign out or revoke the key it was sent with; later cases need working ones. */
const renewCredentials = async () => {
  if ((await api.get("/api/v1/auth/me", { token: account.token })).status !== 200) {
    const login = await api.post("/api/v1/auth/login", { email: account.email, password: account.password })
    account = { ...account, token: login.body.token }
  }
  if ((await api.get("/api/v2/status", { apiKey })).status !== 200) apiKey = await newApiKey(api, account)
}

const credentialHeaders = (credential: Credential): Record<string, string> => {
  switch (credential) {
    case "session":
      return { authorization: `Bearer ${account.token}` }
    case "apiKey":
      return { "x-api-key": apiKey }
    case "bogus":
      return { authorization: "Bearer tgk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "x-api-key": "\u00ff\u00fe" }
    case "none":
      return {}
  }
}

interface Operation {
  readonly method: string
  readonly path: string
  readonly parameters: Array<{ name: string; in: string; schema?: Record<string, any> }>
  readonly bodySchema: Record<string, any> | undefined
}

const operationsOf = (spec: any): Array<Operation> =>
  Object.entries<any>(spec.paths).flatMap(([path, item]) =>
    ["get", "put", "post", "delete", "patch"].filter((method) => item[method]).map((method) => ({
      method,
      path,
      parameters: item[method].parameters ?? [],
      bodySchema: item[method].requestBody?.content?.["application/json"]?.schema
    }))
  )

const requestPath = (template: string, fuzzCase: FuzzCase) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => fuzzCase.path[name] ?? "") + fuzzCase.query

interface ServerFault {
  readonly request: string
  readonly outcome: string
}

describe("fuzzing every operation of the OpenAPI document", () => {
  it("answers malformed bodies and parameters, with and without credentials, never with a 5xx", async () => {
    const spec = (await api.get("/openapi.json")).body
    const operations = operationsOf(spec)
    const faults: Array<ServerFault> = []
    let sent = 0
    let dropped = 0
    let upstream = 0

    const fuzz = async (operation: Operation) => {
      await renewCredentials()
      const cases = fuzzCases(operation, spec.components.schemas, knownIds)
      await fc.assert(
        fc.asyncProperty(cases, async (fuzzCase) => {
          const path = requestPath(operation.path, fuzzCase)
          const reply = await sendRaw(server.url, {
            method: operation.method.toUpperCase(),
            path,
            headers: {
              ...credentialHeaders(fuzzCase.credential),
              ...(fuzzCase.accept ? { accept: fuzzCase.accept } : {}),
              ...(fuzzCase.body?.contentType ? { "content-type": fuzzCase.body.contentType } : {})
            },
            body: fuzzCase.body?.body
          }, agent)
          sent++
          if ("status" in reply) {
            // 502 is the one deliberate 5xx: a provider that failed (a case may have pointed the
            // organization's LLM at a closed loopback port), never a fault of the server itself.
            if (reply.status === 502) upstream++
            else if (reply.status >= 500) {
              faults.push({
                request: describeCase(operation.method, path, fuzzCase),
                outcome: `${reply.status} ${reply.body.slice(0, 300)}`
              })
            }
            return
          }
          // A refused connection is acceptable (e.g. closed after refusing an oversized body) as
          // long as the server still answers; one that stopped answering is the worst fault.
          dropped++
          const health = await sendRaw(server.url, { method: "GET", path: "/api/v1/health", headers: {} }, agent)
          if (!("status" in health) || health.status !== 200) {
            faults.push({
              request: describeCase(operation.method, path, fuzzCase),
              outcome: `server stopped answering: ${reply.error}`
            })
          }
        }),
        { seed: SEED, numRuns: CASES_PER_OPERATION }
      )
    }

    // A few operations at a time: password hashing (login, signup) would otherwise dominate.
    const pending = [...operations]
    await Promise.all(Array.from({ length: CONCURRENT_OPERATIONS }, async () => {
      for (let operation = pending.shift(); operation; operation = pending.shift()) await fuzz(operation)
    }))

    console.log(
      `fuzz: ${operations.length} operations × ${CASES_PER_OPERATION} cases = ${sent} requests (seed ${SEED}), ` +
        `${faults.length} answered 5xx or broke the server, ${upstream} reported a failed provider (502), ${dropped} connections dropped`
    )
    expect(operations.length).toBeGreaterThanOrEqual(67)
    const report = faults.map((fault) => `${fault.request}\n  → ${fault.outcome}`).join("\n")
    expect(faults.length, `5xx answers (reproduce with FUZZ_SEED=${SEED}):\n${report}`).toBe(0)
  }, 300_000)
})
