import { Clock, Effect } from "effect"
import type { CallActions } from "../../services/ConversationEngine.ts"
import { dialStringOf } from "../../src/tools/sendDtmf.ts"
import { argumentsObjectOf } from "../../src/tools/toolArguments.ts"
import { failedOutcome, type ToolOutcome } from "../../src/tools/toolRun.ts"

/** One send_dtmf call: the keys go into the call (a text channel has no keypad to press). */
export const sendDtmfCall = (actions: CallActions | undefined, argumentsText: string): Effect.Effect<ToolOutcome> =>
  Effect.gen(function*() {
    const args = argumentsObjectOf(argumentsText)
    if (args === null) return failedOutcome("the arguments must be a JSON object", 0)
    const dial = dialStringOf(args)
    if ("error" in dial) return failedOutcome(dial.error, 0)
    if (actions === undefined) return failedOutcome("keys can be pressed only on a voice call", 0)
    const startedAt = yield* Clock.currentTimeMillis
    yield* actions.sendDigits(dial.digits)
    const result = { sent: dial.digits }
    return {
      status: "success",
      result: JSON.stringify(result),
      truncated: false,
      latency_ms: (yield* Clock.currentTimeMillis) - startedAt,
      status_code: null,
      request: null,
      data: result
    } satisfies ToolOutcome
  })
