import type { HttpServer } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"

/** Where a running server on the embedded database says how to reach it as the operator. */
export const OPERATOR_FILE = "talkgraph.operator.json"

const OperatorEndpoint = Schema.Struct({
  pid: Schema.Int,
  url: Schema.String,
  token: Schema.String
})
export type OperatorEndpoint = typeof OperatorEndpoint.Type

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The address a client on this machine reaches the server at: a wildcard listen is reached on loopback. */
export const localUrl = (address: HttpServer.Address): string | undefined => {
  if (address._tag !== "TcpAddress") return undefined
  const host = address.hostname === "0.0.0.0" || address.hostname === "" ?
    "127.0.0.1"
    : address.hostname === "::" ?
    "[::1]"
    : address.hostname.includes(":") ?
    `[${address.hostname}]`
    : address.hostname
  return `http://${host}:${address.port}`
}

/**
 * Writes the file for this process's lifetime, readable by its owner only; removed at shutdown
 * unless another process has since replaced it.
 */
export const publishOperatorEndpoint = (dir: string, endpoint: OperatorEndpoint) => {
  const file = path.join(dir, OPERATOR_FILE)
  const text = JSON.stringify(endpoint)
  return Effect.acquireRelease(
    Effect.promise(async () => {
      const partial = `${file}.${process.pid}.part`
      await fs.writeFile(partial, text, { mode: 0o600 })
      await fs.rename(partial, file)
    }),
    () =>
      Effect.promise(async () => {
        const current = await fs.readFile(file, "utf8").catch(() => undefined)
        if (current === text) await fs.rm(file, { force: true })
      })
  )
}

/** The endpoint of a server that is running on `dir`, if there is one. */
export const runningOperatorEndpoint = (dir: string) =>
  Effect.promise(() => fs.readFile(path.join(dir, OPERATOR_FILE), "utf8").catch(() => undefined)).pipe(
    Effect.map((text) =>
      Option.fromNullable(text).pipe(
        Option.flatMap((json) => Schema.decodeUnknownOption(Schema.parseJson(OperatorEndpoint))(json)),
        Option.filter((endpoint) => endpoint.pid !== process.pid && isAlive(endpoint.pid))
      )
    )
  )

/** The live process holding the embedded database in `dir`, if any (see `embeddedPostgres.ts`). */
export const dataDirHolder = (dir: string) =>
  Effect.promise(() => fs.readFile(path.join(dir, "talkgraph.pid"), "utf8").catch(() => "")).pipe(
    Effect.map((text) => {
      const pid = Number(text.trim())
      return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? Option.some(pid) : Option.none()
    })
  )
