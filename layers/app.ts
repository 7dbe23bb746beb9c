import { Effect, Layer } from "effect"
import { ListenLive, serveApi } from "../http/server.ts"
import { AppConfigLive } from "../src/config.ts"
import { Identity } from "../services/Identity.ts"
import { DatabaseLive } from "./database.ts"
import { ApiKeysLive } from "./identity/apiKeys.ts"
import { IdentityLive } from "./identity/identity.ts"
import { ObservabilityLive } from "./observability.ts"
import { SecretBoxLive } from "./secrets/secretBox.ts"

const BootstrapLive = Layer.effectDiscard(Effect.flatMap(Identity, (identity) => identity.bootstrapAdmin))

/** Every service over the database, ready for the HTTP layer (or a CLI command) to use. */
export const ServicesLive = Layer.mergeAll(IdentityLive, ApiKeysLive).pipe(
  Layer.provideMerge(SecretBoxLive),
  Layer.provideMerge(DatabaseLive)
)

/** The running service on a given listener, with everything it needs below it. */
export const appOn = <E, R>(listen: Parameters<typeof serveApi<E, R>>[0]) =>
  serveApi(listen).pipe(
    Layer.provide(BootstrapLive),
    Layer.provideMerge(ServicesLive),
    Layer.provide(ObservabilityLive),
    Layer.provide(AppConfigLive)
  )

/** The one composition of the running service: `talkgraph serve`. */
export const AppLive = appOn(ListenLive)
