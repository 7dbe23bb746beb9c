import { HttpServer } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import * as crypto from "node:crypto"
import { AppConfig } from "../../services/AppConfig.ts"
import { OperatorAccess } from "../../services/OperatorAccess.ts"
import { newOperatorToken } from "../../src/identity/tokens.ts"
import { localUrl, publishOperatorEndpoint } from "./operatorFile.ts"

export const OperatorAccessLive = Layer.sync(OperatorAccess, () => {
  const token = newOperatorToken()
  const expected = Buffer.from(token)
  return OperatorAccess.of({
    token,
    admits: (presented) => {
      const given = Buffer.from(presented)
      return given.length === expected.length && crypto.timingSafeEqual(given, expected)
    }
  })
})

/**
 * Once the server listens on the embedded database, says where and with which token the operator
 * reaches it. On PostgreSQL the command line opens the database itself, so nothing is published.
 */
export const OperatorEndpointLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl)) return
    const server = yield* HttpServer.HttpServer
    const url = localUrl(server.address)
    if (url === undefined) return
    const access = yield* OperatorAccess
    yield* publishOperatorEndpoint(config.dataDir, { pid: process.pid, url, token: access.token })
  })
)
