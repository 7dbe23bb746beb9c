import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { PublicUrl } from "../../../services/PublicUrl.ts"
import { VoiceCalls } from "../../../services/VoiceCalls.ts"
import { MediaProvider } from "../../../src/telephony/media/mod.ts"
import { MEDIA_MESSAGE_MAX_BYTES } from "../../bodyLimits.ts"
import { limitWebSocketMessages } from "../../webSocketMessageLimit.ts"
import { callPage } from "./callPage.ts"

const MediaPath = Schema.Struct({
  source: MediaProvider,
  run_id: Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), Schema.brand("RunId")),
  token: Schema.String
})

const refusal = (status: number, detail: string) => HttpServerResponse.unsafeJson({ detail }, { status })

/**
 * The media WebSocket `/api/v1/telephony/{provider}/media/{run_id}/{token}` (and `browser` for the
 * test call page) and the page itself at `/call`. WebSocket upgrades cannot be described by the
 * HTTP API, so these live on the router beside it. Nothing is upgraded before the link is checked.
 * The token travels in the path because Twilio drops a stream URL's query string; the former
 * `?token=` form has no route (a token in a query string is what proxies and access logs keep).
 */
export const VoiceMediaRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const voice = yield* VoiceCalls
    const baseUrl = yield* PublicUrl
    yield* router.get("/call", Effect.succeed(HttpServerResponse.html(callPage)))
    yield* router.get(
      "/api/v1/telephony/:source/media/:run_id/:token",
      Effect.gen(function*() {
        const path = yield* HttpRouter.schemaPathParams(MediaPath).pipe(Effect.option)
        if (path._tag === "None") return refusal(404, "Not Found")
        const request = yield* HttpServerRequest.HttpServerRequest
        const admitted = yield* voice.admit({
          source: path.value.source,
          runId: path.value.run_id,
          token: path.value.token,
          url: `${baseUrl.replace(/^http/, "ws")}${request.url}`,
          headers: request.headers
        }).pipe(Effect.either)
        if (admitted._tag === "Left") {
          const error = admitted.left
          return error._tag === "NotFound" ? refusal(404, error.message) : refusal(403, error.message)
        }
        yield* limitWebSocketMessages(request, MEDIA_MESSAGE_MAX_BYTES)
        const socket = yield* request.upgrade.pipe(Effect.option)
        if (socket._tag === "None") return refusal(426, "This endpoint takes a WebSocket connection")
        yield* admitted.right(socket.value)
        return HttpServerResponse.empty()
      })
    )
  })
)
