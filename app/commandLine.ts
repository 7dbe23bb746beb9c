import { NodeRuntime } from "@effect/platform-node"
import { ConfigError, Console, Effect, Layer } from "effect"
import { DatabaseLive } from "../layers/database.ts"
import { ObservabilityLive } from "../layers/observability.ts"
import { AppLive } from "./appLayer.ts"
import { AppConfigLive } from "./config.ts"
import { stopOnShutdownSignals } from "./shutdownSignals.ts"
import { testCommand, testCommandUsage } from "./testCommand.ts"
import { userCreate, userCreateUsage } from "./userCommand.ts"

const usage = `talkgraph — voice and chat AI agents

Usage:
  talkgraph serve                     run the HTTP API (migrates first)
  talkgraph migrate                   apply database migrations and exit
  ${userCreateUsage}
  ${testCommandUsage}
                                      run an agent's test cases on a server (TALKGRAPH_URL, TALKGRAPH_API_KEY);
                                      exits 1 unless every case passes
  talkgraph help                      print this help

Configuration comes from the environment; see README.md.`

/** The command runs until it ends or a shutdown signal interrupts it (the watch itself never ends). */
const withInfrastructure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.raceFirst(effect, stopOnShutdownSignals).pipe(Effect.provide(ObservabilityLive), Effect.provide(AppConfigLive))

const serve = Layer.launch(AppLive)

const migrate = Effect.scoped(Layer.build(DatabaseLive)).pipe(
  Effect.zipRight(Console.log("Migrations are up to date."))
)

const askedForHelp = (argument: string | undefined) => argument === "help" || argument === "--help" || argument === "-h"

const command = (argv: Array<string>): Effect.Effect<void, string | { readonly message: string }, never> => {
  const [first, second, ...rest] = argv
  if (askedForHelp(first)) return Console.log(usage)
  // No command is a mistake, not a request to serve: `npm start` says `serve`.
  if (first === undefined) return Effect.fail(usage)
  if (first === "serve") return withInfrastructure(serve)
  if (first === "migrate") return withInfrastructure(migrate)
  if (first === "user" && second === "create") return withInfrastructure(userCreate(rest))
  if (first === "test") return Effect.raceFirst(testCommand(argv.slice(1)), stopOnShutdownSignals)
  return Effect.fail(usage)
}

/** One line for a known failure; a setting read by a layer of its own is named as AppConfig's are. */
const failureLine = (error: string | { readonly message: string }) => {
  if (typeof error === "string") return error
  if (ConfigError.isConfigError(error)) return `talkgraph: Invalid configuration: ${String(error)}`
  return `talkgraph: ${error.message}`
}

/** Known failures print one clear line; anything else is a defect the runtime reports in full. */
const program = command(process.argv.slice(2)).pipe(
  Effect.catchAll((error) =>
    Console.error(failureLine(error)).pipe(
      Effect.zipRight(Effect.sync(() => {
        process.exitCode = 1
      }))
    )
  )
)

NodeRuntime.runMain(program, { disablePrettyLogger: true })
