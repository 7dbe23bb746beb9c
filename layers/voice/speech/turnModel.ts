import { Config, Effect, Layer, Option } from "effect"
import { InvalidConfiguration } from "../../../services/AppConfig.ts"
import { TurnModel, TurnModelFailed } from "../../../services/TurnModel.ts"
import { smartTurnFeatures } from "../../../src/voice/smartTurnInput.ts"
import { openTurnModelSession, type TurnModelSession } from "./turnModelSession.ts"

/**
 * `TALKGRAPH_TURN_MODEL`: the path of an end-of-turn ONNX model of smart-turn v3's shape (not
 * shipped). Unset, calls end turns with the heuristic endpointing alone.
 */
export const turnModelPath = Config.option(Config.nonEmptyString("TALKGRAPH_TURN_MODEL")).pipe(
  Effect.mapError((error) => new InvalidConfiguration({ message: `Invalid configuration: ${String(error)}` }))
)

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * The end-of-turn model: one session per process, opened on the first prediction (a process that
 * takes no voice call never loads it). A file that cannot be opened or has the wrong shape is
 * logged once and not tried again (the path is read once): every call then uses the heuristic.
 */
export const TurnModelLive = Layer.scoped(
  TurnModel,
  Effect.gen(function*() {
    const configured = yield* turnModelPath
    if (Option.isNone(configured)) {
      return TurnModel.of({
        configured: false,
        completeProbability: () =>
          Effect.fail(new TurnModelFailed({ path: "", message: "no end-of-turn model is configured" }))
      })
    }
    const path = configured.value
    let session: Promise<TurnModelSession> | undefined
    let failureLogged = false
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        const opened = await session?.catch(() => undefined)
        await opened?.close()
      })
    )
    const open = Effect.tryPromise({
      try: () => (session ??= openTurnModelSession(path)),
      catch: (error) => new TurnModelFailed({ path, message: `it could not be loaded: ${messageOf(error)}` })
    }).pipe(
      Effect.tapError((failure) =>
        failureLogged ? Effect.void : Effect.logError(
          "The end-of-turn model (TALKGRAPH_TURN_MODEL) cannot be used; calls end turns with the heuristic endpointing"
        ).pipe(
          Effect.annotateLogs({ path, error: failure.message }),
          Effect.zipRight(Effect.sync(() => (failureLogged = true)))
        )
      )
    )
    const completeProbability = Effect.fn("TurnModel.completeProbability")(function*(
      pcm: Int16Array,
      sampleRate: 8000 | 16000
    ) {
      const model = yield* open
      const features = smartTurnFeatures(pcm, sampleRate)
      return yield* Effect.tryPromise({
        try: () => model.run(features),
        catch: (error) => new TurnModelFailed({ path, message: `it failed to answer: ${messageOf(error)}` })
      }).pipe(
        Effect.tapError((failure) =>
          Effect.logWarning("The end-of-turn model failed to answer; the heuristic endpointing decides this pause")
            .pipe(
              Effect.annotateLogs({ path, error: failure.message })
            )
        )
      )
    })
    return TurnModel.of({ configured: true, completeProbability })
  })
)
