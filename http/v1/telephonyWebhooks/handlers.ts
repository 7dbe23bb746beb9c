import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CampaignCalls } from "../../../services/CampaignCalls.ts"
import { PublicUrl } from "../../../services/PublicUrl.ts"
import type { Provider, WebhookRequest } from "../../../services/Telephony.ts"
import { VoiceCalls } from "../../../services/VoiceCalls.ts"
import type { RunId } from "../../../src/domain/ids.ts"
import { Api } from "../../api.ts"

/** The request as the provider signed it: the public URL it called, its headers, the exact body. */
const webhookRequest = (request: HttpServerRequest.HttpServerRequest, baseUrl: string) =>
  Effect.map(
    request.text.pipe(Effect.orElseSucceed(() => "")),
    (rawBody): WebhookRequest => ({ url: `${baseUrl}${request.url}`, headers: request.headers, rawBody })
  )

export const TelephonyWebhooksHandlers = HttpApiBuilder.group(
  Api,
  "telephonyWebhooks",
  (handlers) =>
    Effect.gen(function*() {
      const calls = yield* CampaignCalls
      const voice = yield* VoiceCalls
      const baseUrl = yield* PublicUrl
      const answer = (
        { path, request }: {
          path: { provider: Provider; run_id: RunId }
          request: HttpServerRequest.HttpServerRequest
        }
      ) =>
        Effect.gen(function*() {
          const markup = yield* calls.answer(
            path.provider,
            path.run_id,
            yield* webhookRequest(request, baseUrl)
          )
          return HttpServerResponse.text(markup.body, { contentType: markup.contentType })
        })
      const inbound = (
        { path, request }: {
          path: { provider: Provider; config_id: number }
          request: HttpServerRequest.HttpServerRequest
        }
      ) =>
        Effect.gen(function*() {
          const markup = yield* voice.inbound(
            path.provider,
            path.config_id,
            yield* webhookRequest(request, baseUrl)
          )
          return HttpServerResponse.text(markup.body, { contentType: markup.contentType })
        })
      return handlers
        .handleRaw("status", ({ path, request }) =>
          Effect.gen(function*() {
            yield* calls.statusCallback(path.provider, path.run_id, yield* webhookRequest(request, baseUrl))
            return HttpServerResponse.empty({ status: 204 })
          }))
        .handleRaw("answer", answer)
        .handleRaw("answerGet", answer)
        .handleRaw("transferEvent", ({ path, request }) =>
          Effect.gen(function*() {
            const markup = yield* voice.transferEvent(
              path.provider,
              path.run_id,
              yield* webhookRequest(request, baseUrl)
            )
            return HttpServerResponse.text(markup.body, { contentType: markup.contentType })
          }))
        .handleRaw("transferMarkup", ({ path, request }) =>
          Effect.gen(function*() {
            const markup = yield* voice.transferMarkup(
              path.provider,
              path.run_id,
              yield* webhookRequest(request, baseUrl)
            )
            return HttpServerResponse.text(markup.body, { contentType: markup.contentType })
          }))
        .handleRaw("inbound", inbound)
        .handleRaw("inboundGet", inbound)
    })
)
