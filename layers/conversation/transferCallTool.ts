import { Clock, Effect } from "effect"
import type { CallActions, TransferResult } from "../../services/ConversationEngine.ts"
import { renderTemplate } from "../../src/graph/templateVariables.ts"
import type { TransferCallConfig } from "../../src/tools/callToolConfigs.ts"
import { argumentsObjectOf } from "../../src/tools/toolArguments.ts"
import { failedOutcome, type ToolOutcome } from "../../src/tools/toolRun.ts"
import {
  type ChosenDestination,
  chosenDestination,
  DEFAULT_TRANSFER_TIMEOUT_SECONDS
} from "../../src/tools/transferCall.ts"

/** A transfer as it is recorded on the run (gathered context) and told to the model. */
export interface TransferRecord extends TransferResult {
  readonly destination: string
  readonly type: "cold" | "warm"
}

/**
 * One transfer_call call. Cold: the caller is handed to the destination by the carrier. Warm: the
 * destination is rung and briefed (`whisper_message`, else `summary`) while the caller stays with
 * the agent, and joined with the caller only if it answered. The model is told the outcome;
 * `transfer` is set when the carrier was asked. A text channel (no call) cannot transfer anyone,
 * and its resolver (`resolve`, for a `dynamic` destination) is then never asked.
 */
export const transferCallTool = (
  actions: CallActions | undefined,
  config: TransferCallConfig,
  argumentsText: string,
  variables: Readonly<Record<string, unknown>>,
  summary: Effect.Effect<string>,
  resolve: Effect.Effect<ChosenDestination | { readonly error: string }>
): Effect.Effect<{ readonly outcome: ToolOutcome; readonly transfer: TransferRecord | null }> =>
  Effect.gen(function*() {
    const refused = (message: string) => ({ outcome: failedOutcome(message, 0), transfer: null })
    if (actions === undefined) {
      return refused("a transfer is impossible in a text conversation: there is no phone call to hand over")
    }
    if (actions.transfer === undefined) return refused("this call has no phone line to transfer (a browser test call)")
    const args = argumentsObjectOf(argumentsText)
    if (args === null) return refused("the arguments must be a JSON object")
    const chosen = config.destination_source === "dynamic" ? yield* resolve : chosenDestination(config, args, variables)
    if ("error" in chosen) return refused(chosen.error)
    const startedAt = yield* Clock.currentTimeMillis
    const type = config.transfer_type ?? "cold"
    const written = config.whisper_message ? renderTemplate(config.whisper_message, variables).trim() : ""
    const whisper = type === "cold" ? undefined : written !== "" ? written : yield* summary
    const result = yield* actions.transfer(chosen.endpoint, {
      timeoutSeconds: config.timeout ?? DEFAULT_TRANSFER_TIMEOUT_SECONDS,
      ...(whisper === undefined ? {} : { whisper })
    })
    const told = {
      outcome: result.outcome,
      destination: chosen.name,
      ...(result.outcome === "answered"
        ? {}
        : {
          note: `The transfer did not go through (${
            result.outcome.replace("_", " ")
          }): tell the caller they are not available.`
        })
    }
    return {
      outcome: {
        status: result.outcome === "answered" ? "success" : "error",
        result: JSON.stringify(told),
        truncated: false,
        latency_ms: (yield* Clock.currentTimeMillis) - startedAt,
        status_code: null,
        request: null,
        data: told
      } satisfies ToolOutcome,
      transfer: { ...result, destination: chosen.name, type }
    }
  })
