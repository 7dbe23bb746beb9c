import { argumentsObjectOf } from "../tools/toolArguments.ts"
import { switchSetting } from "../workflows/switchSetting.ts"
import type { ToolDefinition } from "./tools.ts"

/**
 * The agent's own tool for a callee who asks not to be called again: it puts the number of the call
 * on the organization's do-not-call list. Offered only to workflows that turn it on
 * (`workflow_configurations.do_not_call_tool: true`), since listing a number stops every campaign
 * of the organization from calling it.
 */
export const DO_NOT_CALL_TOOL = "add_to_do_not_call"

/** The longest reason kept, as for numbers added through the API. */
const MAX_REASON = 500

export const doNotCallToolDefinition: ToolDefinition = {
  name: DO_NOT_CALL_TOOL,
  description:
    "Put the number of this call on the do-not-call list, so it is never called again. Use it only when the person explicitly asks not to be called (again), e.g. 'stop calling me', 'take me off your list'.",
  parameters: {
    type: "object",
    properties: {
      reason: { type: "string", description: "What the person said, in a few words, e.g. 'asked to stop calling'" }
    },
    additionalProperties: false
  }
}

/** Whether the workflow offers its agent the tool (`do_not_call_tool`). */
export const doNotCallToolSetting = switchSetting("do_not_call_tool")

/** The reason the model gave (trimmed, cut to the list's limit), null when none; or what is wrong with its arguments. */
export const doNotCallReasonOf = (
  argumentsText: string
): { readonly reason: string | null } | { readonly error: string } => {
  const args = argumentsObjectOf(argumentsText)
  if (args === null) return { error: "the arguments must be a JSON object" }
  const reason = args["reason"]
  if (reason === undefined || reason === null) return { reason: null }
  if (typeof reason !== "string") return { error: "\"reason\" must be a string" }
  return { reason: reason.trim().slice(0, MAX_REASON) || null }
}
