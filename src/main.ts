import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { AppLive } from "../layers/app.ts"
import { DatabaseLive } from "../layers/database.ts"
import { ObservabilityLive } from "../layers/observability.ts"
import { AppConfigLive } from "./config.ts"
import { userCreate, userCreateUsage } from "./userCommand.ts"

const usage = `talkgraph — voice and chat AI agents

Usage:
  talkgraph serve                     run the HTTP API (migrates first)
  talkgraph migrate                   apply database migrations and exit
  ${userCreateUsage}

Configuration comes from the environment; see README.md.`

const withInfrastructure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(ObservabilityLive), Effect.provide(AppConfigLive))

const serve = Layer.launch(AppLive)

const migrate = Effect.scoped(Layer.build(DatabaseLive)).pipe(
  Effect.zipRight(Console.log("Migrations are up to date."))
)

const command = (argv: Array<string>): Effect.Effect<void, string | { readonly message: string }, never> => {
  const [first, second, ...rest] = argv
  if (first === undefined || first === "serve") return withInfrastructure(serve)
  if (first === "migrate") return withInfrastructure(migrate)
  if (first === "user" && second === "create") return withInfrastructure(userCreate(rest))
  return Effect.fail(usage)
}

/** Known failures print one clear line; anything else is a defect the runtime reports in full. */
const program = command(process.argv.slice(2)).pipe(
  Effect.catchAll((error) =>
    Console.error(typeof error === "string" ? error : `talkgraph: ${error.message}`).pipe(
      Effect.zipRight(Effect.sync(() => {
        process.exitCode = 1
      }))
    )
  )
)

NodeRuntime.runMain(program, { disablePrettyLogger: true })
