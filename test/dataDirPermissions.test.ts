import { Effect, Exit, Scope } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startEmbeddedPostgres } from "../layers/db/embeddedPostgres.ts"
import { Storage } from "../services/Storage.ts"
import { newAccount } from "./support/accounts.ts"
import { client } from "./support/client.ts"
import { type InProcessServer, startInProcessServer } from "./support/inProcessServer.ts"
import { TEST_ADMIN } from "./support/server.ts"
import { uploadCsv } from "./support/uploads.ts"

/** Every entry under `dir` whose mode lets anyone but the owner in (group or other bits set). */
const looseEntries = async (dir: string) => {
  const loose: Array<string> = []
  const visit = async (at: string) => {
    const stat = await fs.lstat(at)
    if ((stat.mode & 0o077) !== 0) loose.push(`${path.relative(dir, at) || "."} ${(stat.mode & 0o777).toString(8)}`)
    if (stat.isDirectory()) { for (const name of await fs.readdir(at)) await visit(path.join(at, name)) }
  }
  await visit(dir)
  return loose
}

const modeOf = async (file: string) => (await fs.stat(file)).mode & 0o777

const NOBODY = 65534
const canSwitchUser = process.getuid?.() === 0 && spawnSync("psql", ["--version"]).status === 0

/** Tries to reach the database as user `nobody`, with psql and no password: another local user. */
const psqlAsNobody = (target: { host: string; port: number }) =>
  spawnSync("psql", [
    "-h",
    target.host,
    "-p",
    String(target.port),
    "-U",
    "postgres",
    "-d",
    "postgres",
    "-w",
    "-tAc",
    "SELECT 42"
  ], {
    uid: NOBODY,
    gid: NOBODY,
    cwd: "/",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PGCONNECT_TIMEOUT: "5" },
    encoding: "utf8",
    timeout: 20_000
  })

describe("an embedded install's data dir", () => {
  let dataDir: string
  let server: InProcessServer

  beforeAll(async () => {
    // A data dir left by an older version: world-readable, with a world-readable key file.
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-modes-"))
    await fs.chmod(dataDir, 0o755)
    await fs.writeFile(path.join(dataDir, "secret.key"), "a".repeat(64), { mode: 0o644 })
    await fs.chmod(path.join(dataDir, "secret.key"), 0o644)
    server = await startInProcessServer({
      TALKGRAPH_DATA_DIR: dataDir,
      TALKGRAPH_SIGNUP: "true",
      TALKGRAPH_ADMIN_EMAIL: TEST_ADMIN.email,
      TALKGRAPH_ADMIN_PASSWORD: TEST_ADMIN.password,
      LOG_LEVEL: "error"
    })
  }, 180_000)
  afterAll(async () => {
    await server?.close()
    await fs.rm(dataDir, { recursive: true, force: true })
  })

  it("keeps the database, storage and secret key owner-only (0700 directories, 0600 files)", async () => {
    const api = client(server.url)
    const account = await newAccount(api)
    await uploadCsv(api, { token: account.token }, "phone_number\n+14155550123\n")
    await server.run(
      Effect.flatMap(
        Storage,
        (storage) => storage.write(`calls/${account.organizationId}/1/recording.wav`, new Uint8Array(64), "audio/wav")
      )
    )

    expect(await modeOf(dataDir)).toBe(0o700)
    expect(await modeOf(path.join(dataDir, "secret.key"))).toBe(0o600)
    expect(await modeOf(path.join(dataDir, "storage"))).toBe(0o700)
    expect(await looseEntries(dataDir)).toEqual([])
  })
})

describe("the embedded database's socket", () => {
  let dataDir: string
  let scope: Scope.CloseableScope
  let target: { host: string; port: number }

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-socket-"))
    scope = await Effect.runPromise(Scope.make())
    target = await Effect.runPromise(Scope.extend(startEmbeddedPostgres(dataDir), scope))
  }, 180_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await fs.rm(dataDir, { recursive: true, force: true })
  })

  it("is a Unix socket inside the owner-only data dir, not a TCP port, and the server reaches it", async () => {
    expect(target.host.startsWith(dataDir + path.sep) || target.host === dataDir).toBe(true)
    const socket = await fs.lstat(path.join(target.host, `.s.PGSQL.${target.port}`))
    expect(socket.isSocket()).toBe(true)
    expect(socket.mode & 0o077).toBe(0)
    expect(await modeOf(dataDir)).toBe(0o700)
    const connection = new pg.Client({ host: target.host, port: target.port, user: "postgres", database: "postgres" })
    await connection.connect()
    expect((await connection.query("SELECT 42 AS answer")).rows).toEqual([{ answer: 42 }])
    await connection.end()
  })

  it.runIf(canSwitchUser)("refuses psql from another local user", () => {
    const attempt = psqlAsNobody(target)
    expect(attempt.stdout.trim()).not.toBe("42")
    expect(attempt.status).not.toBe(0)
    expect(attempt.stderr).toMatch(/Permission denied|No such file/)
  })
})
