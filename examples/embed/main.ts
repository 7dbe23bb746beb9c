/**
 * An Effect application of its own that runs talkgraph inside it: talkgraph's services on the
 * application's PostgreSQL client, talkgraph's API mounted in the application's router beside its
 * own route, and the application's own code calling talkgraph's services directly.
 */
import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Clock, Config, Console, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { AppConfigLive, ServicesOnSqlClient } from "talkgraph"
import { ApiApp, ApiAppLive } from "talkgraph/http"
import { DialerLive, pgTypes, PublicUrlLive } from "talkgraph/layers"
import { Campaigns, CampaignScheduler, Identity } from "talkgraph/services"

/** The application's own database client; talkgraph migrates its tables on it at start. */
const SqlLive = PgClient.layerConfig({ url: Config.redacted("DATABASE_URL"), types: Config.succeed(pgTypes) })

const ServerLive = NodeHttpServer.layerConfig(createServer, {
  port: Config.port("PORT").pipe(Config.withDefault(3000)),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1"))
})

/** talkgraph's services, its campaign dialer and its API, configured from the environment as `talkgraph serve` is. */
const TalkgraphLive = Layer.merge(DialerLive, ApiAppLive).pipe(
  Layer.provideMerge(ServicesOnSqlClient),
  Layer.provideMerge(PublicUrlLive),
  Layer.provide(SqlLive),
  Layer.provideMerge(AppConfigLive)
)

/** The application's router: its own route, and talkgraph's API at its usual paths under /api. */
const HttpLive = Layer.unwrapEffect(
  Effect.map(ApiApp, (talkgraphApi) =>
    HttpRouter.empty.pipe(
      HttpRouter.get("/hello", HttpServerResponse.text("hello from the embedding application")),
      HttpRouter.mountApp("/api", talkgraphApi, { includePrefix: true }),
      HttpServer.serve()
    ))
)

/** The application's own code: an organization of its own, and what talkgraph holds for it. */
const reportCampaigns = Effect.gen(function*() {
  const identity = yield* Identity
  const campaigns = yield* Campaigns
  const scheduler = yield* CampaignScheduler
  const email = `embedder-${yield* Clock.currentTimeMillis}@example.com`
  const password = "an embedding application's password"
  const user = yield* identity.createUser({ email, password, name: "Embedding example" })
  const session = yield* identity.login(email, password)
  const principal = yield* identity.authenticate(session.token, "sessionOrKey")
  const page = yield* campaigns.list(principal, { page: 1, limit: 20 })
  const held = yield* scheduler.held
  yield* Console.log(
    `organization ${user.organization_id}: ${page.total_count} campaign(s); ` +
      `dialer ${scheduler.owner} holds ${held.length} campaign(s)`
  )
})

const AppLive = HttpLive.pipe(Layer.provideMerge(TalkgraphLive), Layer.provideMerge(ServerLive))

NodeRuntime.runMain(reportCampaigns.pipe(Effect.zipRight(Effect.never), Effect.provide(AppLive)))
