import { afterAll, beforeAll, describe, expect, inject, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { startEmbeddedPostgres } from "../layers/db/embeddedPostgres.ts"
import { PooledConnection } from "../layers/db/pooledConnection.ts"
import { StatementPreparingClient } from "../layers/db/statementPreparingClient.ts"
import { postgresUrl } from "./support/database.ts"

// The product prepares statements on the embedded PGlite only; the client is checked on whichever
// database this run uses, as the rules it relies on are PostgreSQL's.
let scope: Scope.CloseableScope
let dataDir: string | undefined
let pool: pg.Pool
let target: pg.PoolConfig

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  const url = postgresUrl()
  target = { connectionString: url }
  if (!url) {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-prepared-"))
    await fs.cp(inject("pgliteTemplate"), dataDir, { recursive: true })
    const embedded = await Effect.runPromise(Scope.extend(startEmbeddedPostgres(dataDir), scope))
    target = { host: embedded.host, port: embedded.port, database: "postgres", user: "postgres" }
  }
  pool = new pg.Pool({ ...target, Client: StatementPreparingClient, max: 1 })
})

afterAll(async () => {
  await pool.end()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true })
})

const preparedCount = async (client: pg.PoolClient, text: string) =>
  Number(
    (await client.query(
      `SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = '${text.replaceAll("'", "''")}'`
    )).rows[0].n
  )

const withClient = async <A>(use: (client: pg.PoolClient) => Promise<A>) => {
  const client = await pool.connect()
  try {
    return await use(client)
  } finally {
    client.release()
  }
}

describe("preparing statements once per connection", () => {
  it("answers a parameterized statement from one prepared statement, whatever the values", () =>
    withClient(async (client) => {
      const text = "SELECT $1::int + 1 AS n"
      for (const value of [1, 2, 41]) expect((await client.query(text, [value])).rows).toEqual([{ n: value + 1 }])
      expect(await preparedCount(client, text)).toBe(1)
    }))

  it("parses a statement again after its parse failed, and keeps a statement whose values were refused", () =>
    withClient(async (client) => {
      const table = `prepared_later_${process.pid}`
      const text = `SELECT n FROM ${table} WHERE n = $1`
      await expect(client.query(text, [1])).rejects.toMatchObject({ code: "42P01" })
      await client.query(`CREATE TEMP TABLE ${table} (n int); INSERT INTO ${table} VALUES (1), (2)`)
      expect((await client.query(text, [2])).rows).toEqual([{ n: 2 }])
      await expect(client.query(text, ["not a number"])).rejects.toMatchObject({ code: "22P02" })
      expect((await client.query(text, [1])).rows).toEqual([{ n: 1 }])
      expect(await preparedCount(client, text)).toBe(1)
    }))

  it("survives a rolled-back transaction that prepared it", () =>
    withClient(async (client) => {
      const text = "SELECT $1::text || '!' AS said"
      await client.query("BEGIN")
      expect((await client.query(text, ["inside"])).rows).toEqual([{ said: "inside!" }])
      await client.query("ROLLBACK")
      expect((await client.query(text, ["after"])).rows).toEqual([{ said: "after!" }])
    }))

  it("stops preparing past its limit, and those statements still run", () =>
    withClient(async (client) => {
      for (let i = 0; i < 520; i++) {
        expect((await client.query(`SELECT $1::int + ${i} AS n`, [1])).rows).toEqual([{ n: 1 + i }])
      }
      const prepared = Number((await client.query("SELECT count(*) AS n FROM pg_prepared_statements")).rows[0].n)
      expect(prepared).toBeLessThanOrEqual(500)
      expect(prepared).toBeGreaterThan(400)
    }))
})

describe("pooled connections", () => {
  it("never hand the next user a connection left inside a transaction", async () => {
    const connections = new pg.Pool({ ...target, Client: PooledConnection, max: 1 })
    try {
      const first = await connections.connect()
      const firstPid = (await first.query("SELECT pg_backend_pid() AS pid")).rows[0].pid
      await first.query("BEGIN")
      first.release()
      const second = await connections.connect()
      expect(second.getTransactionStatus()).not.toBe("T")
      expect((await second.query("SELECT now() = statement_timestamp() AS outside")).rows).toEqual([{ outside: true }])
      if (postgresUrl()) expect((await second.query("SELECT pg_backend_pid() AS pid")).rows[0].pid).not.toBe(firstPid)
      second.release()
    } finally {
      await connections.end()
    }
  })
})
