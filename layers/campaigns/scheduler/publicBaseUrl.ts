import { HttpServer } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../../src/config.ts"

/** Where carriers reach this service: the base of every answer, status and media URL we hand them. */
export class PublicBaseUrl extends Context.Tag("talkgraph/PublicBaseUrl")<PublicBaseUrl, string>() {}

/**
 * PUBLIC_URL when it is set, else the address the server actually listens on (which differs from
 * HOST:PORT when the OS picks the port).
 */
export const publicBaseUrlOf = Effect.gen(function* () {
  const config = yield* AppConfig
  const server = yield* HttpServer.HttpServer
  const address = server.address
  const configuredDefault = `http://${config.host}:${config.port}`
  return config.publicUrl === configuredDefault && address._tag === "TcpAddress"
    ? `http://${config.host}:${address.port}`
    : config.publicUrl
})

export const PublicBaseUrlLive = Layer.effect(PublicBaseUrl, publicBaseUrlOf)
