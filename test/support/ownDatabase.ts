import * as crypto from "node:crypto"
import pg from "pg"

/**
 * A fresh PostgreSQL database beside the suite's one, for tests whose campaigns must not be
 * dialled by other test files' servers (every serving process takes running campaigns it can lease).
 */
export const createOwnDatabase = async (suiteUrl: string) => {
  const name = `talkgraph_own_${crypto.randomBytes(4).toString("hex")}`
  const admin = new pg.Client({ connectionString: suiteUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(suiteUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const cleanup = new pg.Client({ connectionString: suiteUrl })
      await cleanup.connect()
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await cleanup.end()
    }
  }
}
