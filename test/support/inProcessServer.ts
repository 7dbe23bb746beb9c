import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { ConfigProvider, Effect, Exit, Layer, Scope } from "effect"
import { appOn } from "../../app/appLayer.ts"
import { closableServer } from "../../http/server.ts"

export interface InProcessServer {
  readonly url: string
  /** Runs an effect against the server's own services (e.g. its SqlClient). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
  readonly close: () => Promise<void>
}

/**
 * The real talkgraph service built in this process from `settings` (as environment variables),
 * listening on a random loopback port. Tests and benchmarks share it.
 */
export const startInProcessServer = async (settings: Record<string, string>): Promise<InProcessServer> => {
  const scope = Effect.runSync(Scope.make())
  // The stand-ins a test or benchmark points providers at all listen on 127.0.0.1, and this one
  // process is the only one writing to its storage directory.
  const environment = { TALKGRAPH_OUTBOUND_ALLOW: "loopback", TALKGRAPH_LOCAL_STORAGE_SHARED: "true", ...settings }
  // The product's server, whose close cuts connections still open after a short grace (a carrier
  // stand-in's request in flight would otherwise hold a test's teardown for ever).
  const layer = appOn(NodeHttpServer.layer(closableServer, { port: 0, host: "127.0.0.1" })).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(environment)))))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
    Effect.runPromise(Effect.provide(effect, context) as Effect.Effect<A, E>)
  const address = (await run(HttpServer.HttpServer)).address as HttpServer.TcpAddress
  return {
    url: `http://127.0.0.1:${address.port}`,
    run,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
