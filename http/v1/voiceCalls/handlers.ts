import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { VoiceCalls } from "../../../services/VoiceCalls.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

export const VoiceCallsHandlers = HttpApiBuilder.group(Api, "voiceCalls", (handlers) =>
  Effect.gen(function*() {
    const voice = yield* VoiceCalls
    return handlers.handle("startBrowserCall", ({ path, payload }) =>
      requireScope("agents:write").pipe(Effect.flatMap((principal) =>
        voice.startBrowserCall(principal, path.workflow_id, payload)
      )))
  }))
