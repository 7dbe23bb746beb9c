import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { client } from "./support/client.ts"
import { databaseKind, postgresUrl } from "./support/database.ts"
import { startPasswordRefusingPostgres } from "./support/passwordRefusingPostgres.ts"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "./support/process.ts"
import { type LocalS3, startS3 } from "./support/s3.ts"
import { reply, startScriptedLlm } from "./support/scriptedLlm.ts"
import { runnableDefinition } from "./support/workflowGraphs.ts"

const admin = { email: "owner@example.test", password: "owner-password-1" }
const dirs: Array<string> = []
const tempDir = async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-proc-"))
  dirs.push(dir)
  return dir
}
afterAll(async () => {
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))
})

const embeddedEnv = async (dataDir: string) => ({
  TALKGRAPH_DATA_DIR: dataDir,
  PORT: String(await freePort()),
  TALKGRAPH_ADMIN_EMAIL: admin.email,
  TALKGRAPH_ADMIN_PASSWORD: admin.password
})

describe("embedded mode", () => {
  it("keeps users and API keys across a restart, and refuses a second process on the same data dir", async () => {
    const dataDir = await tempDir()
    const env = await embeddedEnv(dataDir)
    const url = `http://127.0.0.1:${env.PORT}`
    const api = client(url)

    const first = spawnTalkgraph(["serve"], env)
    await waitUntilServing(first, url)
    const login = await api.post("/api/v1/auth/login", admin)
    expect(login.status).toBe(200)
    const key =
      (await api.post("/api/v1/user/api-keys", { name: "survives" }, { token: login.body.token })).body.api_key

    const intruder = spawnTalkgraph(["serve"], { ...env, PORT: String(await freePort()) })
    expect(await intruder.exited).toBe(1)
    expect(intruder.output()).toMatch(/in use by process \d+/)

    expect(await stop(first)).toBe(0)
    const second = spawnTalkgraph(["serve"], env)
    try {
      await waitUntilServing(second, url)
      expect((await api.get("/api/v2/status", { apiKey: key })).status).toBe(200)
      expect((await api.get("/api/v1/auth/me", { token: login.body.token })).status).toBe(200)
    } finally {
      await stop(second)
    }
  })

  it("prints a generated admin password once when none is configured", async () => {
    const dataDir = await tempDir()
    const port = String(await freePort())
    const url = `http://127.0.0.1:${port}`
    const proc = spawnTalkgraph(["serve"], { TALKGRAPH_DATA_DIR: dataDir, PORT: port })
    try {
      await waitUntilServing(proc, url)
      const password = /password: (\S+)/.exec(proc.output())?.[1]
      expect(password).toBeDefined()
      const login = await client(url).post("/api/v1/auth/login", { email: "admin@talkgraph.local", password })
      expect(login.status).toBe(200)
    } finally {
      await stop(proc)
    }
  })
})

describe("shutdown", () => {
  it("stops on SIGTERM although a client is still sending a request", async () => {
    const env = await embeddedEnv(await tempDir())
    const proc = spawnTalkgraph(["serve"], env)
    let socket: net.Socket | undefined
    try {
      await waitUntilServing(proc, `http://127.0.0.1:${env.PORT}`)
      socket = net.connect(Number(env.PORT), "127.0.0.1")
      await new Promise((resolve) => socket!.once("connect", resolve))
      socket.write(
        "POST /api/v1/auth/login HTTP/1.1\r\nHost: talkgraph\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"email\""
      )
      await new Promise((resolve) => setTimeout(resolve, 300))
      proc.child.kill("SIGTERM")
      const exited = await Promise.race([
        proc.exited,
        new Promise((resolve) => setTimeout(() => resolve("still running"), 10_000))
      ])
      expect(exited).toBe(0)
    } finally {
      socket?.destroy()
      proc.child.kill("SIGKILL")
    }
  }, 90_000)
})

describe("logs", () => {
  it("writes a JSON line per request and for failures, and never a credential, token or key", async () => {
    const llm = await startScriptedLlm()
    const env = { ...(await embeddedEnv(await tempDir())), LOG_LEVEL: "debug" }
    const url = `http://127.0.0.1:${env.PORT}`
    const api = client(url)
    const proc = spawnTalkgraph(["serve"], env)
    const secrets: Array<string> = [
      admin.password,
      "wrong-password-77",
      "sk-log-test-llm-key-9f8e",
      "tw-log-test-auth-5566",
      "query-credential-31337"
    ]
    try {
      await waitUntilServing(proc, url)
      expect((await api.post("/api/v1/auth/login", { email: admin.email, password: "wrong-password-77" })).status).toBe(
        401
      )
      const token = (await api.post("/api/v1/auth/login", admin)).body.token as string
      const key = (await api.post("/api/v1/user/api-keys", { name: "logged?" }, { token })).body.api_key as string
      secrets.push(token, key)
      const llmSettings = {
        llm: { provider: "openai", model: "m", api_key: "sk-log-test-llm-key-9f8e", base_url: llm.baseUrl }
      }
      expect((await api.put("/api/v1/organizations/model-configurations", llmSettings, { apiKey: key })).status).toBe(
        200
      )
      const twilio = {
        name: "Main",
        config: {
          provider: "twilio",
          account_sid: "AC11112222333344445555",
          auth_token: "tw-log-test-auth-5566",
          api_base_url: "http://127.0.0.1:9"
        }
      }
      expect((await api.post("/api/v1/organizations/telephony-configs", twilio, { apiKey: key })).status).toBe(200)
      const workflow = (await api.post("/api/v1/workflow/create/definition", {
        name: "Logged agent",
        workflow_definition: runnableDefinition()
      }, { apiKey: key })).body
      const sessions = `/api/v1/workflow/${workflow.id}/text-chat/sessions`
      const run = (await api.post(sessions, {}, { apiKey: key })).body.workflow_run_id
      llm.enqueue(reply.error(401, "invalid key sk-log-test-llm-key-9f8e"))
      expect((await api.post(`${sessions}/${run}/messages`, { text: "Hello?" }, { apiKey: key })).status)
        .toBeGreaterThanOrEqual(500)
      expect((await api.get("/api/v1/health?token=query-credential-31337")).status).toBe(200)
    } finally {
      await stop(proc)
      await llm.close()
    }
    const lines = proc.output().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
    expect(lines).toContainEqual(expect.objectContaining({
      message: "Sent HTTP response",
      logLevel: "INFO",
      annotations: { "http.method": "GET", "http.path": "/api/v1/health", "http.status": 200 }
    }))
    expect(lines).toContainEqual(expect.objectContaining({ message: "LLM chat request failed", logLevel: "WARN" }))
    for (const secret of secrets) expect(proc.output()).not.toContain(secret)
  }, 90_000)
})

describe("command line", () => {
  it("prints usage and exits 1 without a command, touching nothing", async () => {
    const dataDir = path.join(await tempDir(), "never-created")
    const proc = spawnTalkgraph([], { TALKGRAPH_DATA_DIR: dataDir, PORT: String(await freePort()) })
    try {
      expect(await proc.exited).toBe(1)
      expect(proc.output()).toMatch(/Usage:\n {2}talkgraph serve/)
      await expect(fs.access(dataDir)).rejects.toThrow()
    } finally {
      proc.child.kill("SIGKILL")
    }
  })

  it.each([["--help"], ["help"], ["-h"]])("prints usage for %s and exits 0", async (flag) => {
    const proc = spawnTalkgraph([flag], { TALKGRAPH_DATA_DIR: path.join(await tempDir(), "never-created") })
    expect(await proc.exited).toBe(0)
    expect(proc.output()).toMatch(/Usage:\n {2}talkgraph serve/)
  })
})

describe("starting", () => {
  it("refuses a busy port with one line saying so, before creating the data dir or an admin", async () => {
    const dataDir = path.join(await tempDir(), "never-created")
    const port = await freePort()
    const holder = net.createServer()
    await new Promise<void>((resolve) => holder.listen(port, "127.0.0.1", resolve))
    try {
      const proc = spawnTalkgraph(["serve"], { TALKGRAPH_DATA_DIR: dataDir, PORT: String(port) })
      expect(await proc.exited).toBe(1)
      expect(proc.output()).toContain(`talkgraph: port ${port} on 127.0.0.1 is already in use`)
      expect(proc.output()).not.toMatch(/password|migration/i)
      await expect(fs.access(dataDir)).rejects.toThrow()
    } finally {
      holder.close()
    }
  })

  it.each([
    ["192.0.2.1", /talkgraph: HOST 192\.0\.2\.1 is not an address of this machine/],
    ["no-such-host.invalid", /talkgraph: HOST no-such-host\.invalid does not resolve to an address/]
  ])("refuses HOST=%s, naming it, before creating the data dir", async (host, message) => {
    const dataDir = path.join(await tempDir(), "never-created")
    const proc = spawnTalkgraph(["serve"], { TALKGRAPH_DATA_DIR: dataDir, HOST: host, PORT: String(await freePort()) })
    expect(await proc.exited).toBe(1)
    expect(proc.output()).toMatch(message)
    await expect(fs.access(dataDir)).rejects.toThrow()
  })

  it("answers 503 while the database starts, instead of leaving requests unanswered", async () => {
    const env = await embeddedEnv(await tempDir())
    const url = `http://127.0.0.1:${env.PORT}`
    const proc = spawnTalkgraph(["serve"], env)
    const answers: Array<number> = []
    try {
      while (answers.at(-1) !== 200) {
        if (proc.child.exitCode !== null) throw new Error(proc.output())
        const reply = await fetch(`${url}/api/v1/health`, { signal: AbortSignal.timeout(10_000) }).catch((
          error: Error
        ) => error.name === "TimeoutError" ? Promise.reject(error) : undefined)
        if (reply) {
          answers.push(reply.status)
          if (reply.status === 503) expect(await reply.json()).toEqual({ detail: "talkgraph is starting or stopping" })
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(answers).toContain(503)
      expect(new Set(answers)).toEqual(new Set([503, 200]))
    } finally {
      await stop(proc)
    }
  })
})

describe("an unusable DATABASE_URL", () => {
  const secretKey = "k".repeat(40)
  const failsWith = async (command: string, databaseUrl: string, password: string) => {
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      TALKGRAPH_SECRET_KEY: secretKey,
      TALKGRAPH_DATA_DIR: await tempDir()
    }
    if (command === "serve") env.PORT = String(await freePort())
    const proc = spawnTalkgraph([command], env)
    expect(await proc.exited).toBe(1)
    expect(proc.output()).not.toContain("Failed to connect")
    expect(proc.output()).not.toContain(password)
    return proc.output()
  }

  it.each(["migrate", "serve"])("%s says the connection was refused", async (command) => {
    const port = await freePort()
    expect(
      await failsWith(command, `postgres://talkgraph:refused-pw-5521@127.0.0.1:${port}/talkgraph`, "refused-pw-5521")
    )
      .toContain(`talkgraph: PostgreSQL at 127.0.0.1:${port} refused the connection`)
  })

  it("says the host is unknown", async () => {
    expect(
      await failsWith(
        "migrate",
        "postgres://talkgraph:unknown-pw-8812@no-such-host.invalid:5432/talkgraph",
        "unknown-pw-8812"
      )
    )
      .toContain("talkgraph: the DATABASE_URL host no-such-host.invalid is unknown")
  })

  it("says the password was refused, without printing it", async () => {
    const postgres = await startPasswordRefusingPostgres()
    try {
      expect(
        await failsWith(
          "migrate",
          `postgres://talkgraph:wrong-pw-7731@127.0.0.1:${postgres.port}/talkgraph`,
          "wrong-pw-7731"
        )
      )
        .toContain(
          `talkgraph: PostgreSQL at 127.0.0.1:${postgres.port} refused the password of user "talkgraph" (authentication failed)`
        )
    } finally {
      await postgres.close()
    }
  })

  it.runIf(databaseKind() === "postgres")("says the database does not exist", async () => {
    const url = new URL(postgresUrl()!)
    url.pathname = "/talkgraph_no_such_database"
    url.password = "unused-pw-4410"
    expect(await failsWith("migrate", url.toString(), "unused-pw-4410"))
      .toMatch(/talkgraph: database "talkgraph_no_such_database" does not exist on PostgreSQL at [^:]+:\d+/)
  })
})

describe("S3 storage that cannot be used", () => {
  let s3: LocalS3
  beforeAll(async () => {
    s3 = await startS3()
  })
  afterAll(async () => {
    await s3?.close()
  })

  const startFailsWith = async (settings: Record<string, string>) => {
    const dataDir = await tempDir()
    await fs.cp(inject("pgliteTemplate"), dataDir, { recursive: true })
    const proc = spawnTalkgraph(["serve"], { ...(await embeddedEnv(dataDir)), ...s3.env, ...settings })
    try {
      const exited = await Promise.race([
        proc.exited,
        new Promise((resolve) => setTimeout(() => resolve("still running"), 45_000))
      ])
      expect(exited, proc.output()).toBe(1)
      return proc.output()
    } finally {
      proc.child.kill("SIGKILL")
    }
  }

  it("is reported at start when it refuses connections", async () => {
    const port = await freePort()
    expect(await startFailsWith({ S3_ENDPOINT: `http://127.0.0.1:${port}` }))
      .toContain(`talkgraph: S3 storage at http://127.0.0.1:${port} refused the connection`)
  })

  it("is reported at start when it never answers", async () => {
    const silent = net.createServer(() => undefined)
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    const endpoint = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`
    try {
      expect(await startFailsWith({ S3_ENDPOINT: endpoint })).toContain(
        `talkgraph: S3 storage at ${endpoint} did not answer within 10 s`
      )
    } finally {
      silent.close()
    }
  }, 90_000)

  it("is reported at start when the bucket does not exist", async () => {
    expect(await startFailsWith({ STORAGE_URL: "s3://no-such-bucket/uploads" }))
      .toContain(`talkgraph: the bucket of s3://no-such-bucket/uploads/ does not exist at ${s3.endpoint}`)
  })

  // s3rver checks the access key but not SigV4 signatures, so a wrong secret is covered in storageChecks.test.ts.
  it("is reported at start when it does not know the access key", async () => {
    expect(await startFailsWith({ AWS_ACCESS_KEY_ID: "UNKNOWNKEY" }))
      .toContain(`talkgraph: S3 storage at ${s3.endpoint} does not know the access key in AWS_ACCESS_KEY_ID`)
  })
})

describe("configuration", () => {
  it("refuses to start on a bad value with one clear line naming the variable", async () => {
    const proc = spawnTalkgraph(["serve"], { TALKGRAPH_DATA_DIR: await tempDir(), PORT: "eighty" })
    expect(await proc.exited).toBe(1)
    expect(proc.output()).toMatch(/talkgraph: Invalid configuration: .*PORT/)
    expect(proc.output()).not.toMatch(/at .*\.ts:\d+/)
  })

  it.each([
    ["TALKGRAPH_RELEASE_IDLE_MEMORY", "sometimes"],
    ["TALKGRAPH_DISPATCH_HOLD_LOOP_PERCENT", "500"]
  ])("names %s, a setting its own part of the server reads, when its value is bad", async (name, value) => {
    const proc = spawnTalkgraph(["serve"], { TALKGRAPH_DATA_DIR: await tempDir(), [name]: value })
    expect(await proc.exited).toBe(1)
    expect(proc.output()).toMatch(new RegExp(`talkgraph: Invalid configuration: .*${name}`))
  })

  it("refuses a bad value at once on a data dir that holds a database, and lets go of the data dir", async () => {
    // The embedded database's thread starts ahead of the rest of the command line on such a dir.
    const dataDir = await tempDir()
    expect(await spawnTalkgraph(["migrate"], { TALKGRAPH_DATA_DIR: dataDir }).exited).toBe(0)
    const refused = spawnTalkgraph(["serve"], { TALKGRAPH_DATA_DIR: dataDir, PORT: "eighty" })
    expect(await refused.exited).toBe(1)
    expect(refused.output()).toMatch(/talkgraph: Invalid configuration: .*PORT/)
    expect(await fs.stat(path.join(dataDir, "talkgraph.pid")).then(() => "locked", () => "free")).toBe("free")
    const again = spawnTalkgraph(["migrate"], { TALKGRAPH_DATA_DIR: dataDir })
    expect(await again.exited, again.output()).toBe(0)
    expect(again.output()).toContain("Migrations are up to date.")
  })
})

describe.runIf(databaseKind() === "postgres")("PostgreSQL", () => {
  it("lets several processes migrate one fresh database at the same time", async () => {
    const base = new URL(postgresUrl()!)
    const database = `talkgraph_migrate_${Date.now()}`
    const adminClient = new pg.Client({ connectionString: base.toString() })
    await adminClient.connect()
    await adminClient.query(`CREATE DATABASE ${database}`)
    try {
      const url = new URL(base.toString())
      url.pathname = `/${database}`
      const env = {
        DATABASE_URL: url.toString(),
        TALKGRAPH_SECRET_KEY: "k".repeat(40),
        TALKGRAPH_DATA_DIR: await tempDir()
      }
      const runs = [1, 2, 3].map(() => spawnTalkgraph(["migrate"], env))
      const codes = await Promise.all(runs.map((run) => run.exited))
      expect(codes, runs.map((run) => run.output()).join("\n")).toEqual([0, 0, 0])

      const check = new pg.Client({ connectionString: url.toString() })
      await check.connect()
      const applied = await check.query("SELECT migration_id FROM effect_sql_migrations ORDER BY migration_id")
      const ids = applied.rows.map((row) => row.migration_id)
      expect(ids).toEqual([...new Set(ids)])
      expect(ids[0]).toBe(1)
      await check.end()
    } finally {
      await adminClient.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      await adminClient.end()
    }
  })
})
