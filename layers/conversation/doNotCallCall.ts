import { Clock, Effect } from "effect"
import type { ConversationPlan } from "../../services/ConversationEngine.ts"
import type { DoNotCallShape } from "../../services/DoNotCall.ts"
import type { ChatToolCall } from "../../services/LlmChat.ts"
import { DO_NOT_CALL_TOOL, doNotCallReasonOf } from "../../src/conversation/doNotCallTool.ts"
import type { ToolCall } from "../../src/conversation/transcript.ts"

/**
 * One add_to_do_not_call call: the call's number goes on the run's organization's list (source
 * `agent_tool`), at most once. A conversation with no number (a text chat, a browser test call)
 * adds nothing, and the model is told so, as it is of bad arguments.
 */
export const doNotCallCall = (
  doNotCall: DoNotCallShape,
  target: NonNullable<ConversationPlan["doNotCall"]>,
  call: ChatToolCall
): Effect.Effect<ToolCall> =>
  Effect.gen(function*() {
    const base = {
      id: call.id,
      name: call.name,
      tool_uuid: DO_NOT_CALL_TOOL,
      arguments: call.arguments,
      truncated: false
    }
    const failed = (message: string) =>
      ({ ...base, status: "error", latency_ms: 0, result: `Error: ${message}` }) as const
    const asked = doNotCallReasonOf(call.arguments)
    if ("error" in asked) return failed(asked.error)
    if (target.phoneNumber === null) {
      return failed(
        "this conversation is not a phone call, so it has no number to put on the do-not-call list; nothing was added"
      )
    }
    const started = yield* Clock.currentTimeMillis
    // Never cut off half-way by the caller speaking: what they asked for is done either way.
    const added = yield* Effect.uninterruptible(
      doNotCall.record(target.organizationId, target.phoneNumber, "agent_tool", asked.reason)
    )
    yield* Effect.logInfo("Number put on the do-not-call list by the agent").pipe(
      Effect.annotateLogs({ organization_id: target.organizationId, already_listed: !added })
    )
    return {
      ...base,
      status: "success",
      latency_ms: (yield* Clock.currentTimeMillis) - started,
      result: JSON.stringify({ listed: true, already_listed: !added })
    } satisfies ToolCall
  }).pipe(Effect.withSpan("ConversationEngine.addToDoNotCall"))
