import { HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
import { AppConfig } from "../services/AppConfig.ts"
import { PublicUrl } from "../services/PublicUrl.ts"

/**
 * PUBLIC_URL when it is set, else the address the server actually listens on (which differs
 * from HOST:PORT when the OS picks the port, as tests do).
 */
export const PublicUrlLive = Layer.effect(
  PublicUrl,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const server = yield* HttpServer.HttpServer
    const address = server.address
    const configuredDefault = `http://${config.host}:${config.port}`
    return config.publicUrl === configuredDefault && address._tag === "TcpAddress"
      ? `http://${config.host}:${address.port}`
      : config.publicUrl
  })
)
