import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import { AppConfig } from "../src/config.ts"

/**
 * Where clients and carriers reach this process: PUBLIC_URL when it is set, else the address the
 * server actually listens on (which differs from HOST:PORT when the OS picks the port).
 */
export const publicUrl = Effect.gen(function*() {
  const config = yield* AppConfig
  const server = yield* HttpServer.HttpServer
  const address = server.address
  const configuredDefault = `http://${config.host}:${config.port}`
  return config.publicUrl === configuredDefault && address._tag === "TcpAddress"
    ? `http://${config.host}:${address.port}`
    : config.publicUrl
})
