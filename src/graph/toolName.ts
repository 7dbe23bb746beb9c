/**
 * The name of the LLM tool an edge becomes: its label lower-cased, each run of characters outside
 * `a-z0-9` replaced by one `_` ("Transfer to Billing!" → "transfer_to_billing_"). The conversation
 * engine offers tools under exactly this name, so validation and runtime share this function.
 */
export const toolNameFor = (label: string): string => label.toLowerCase().replace(/[^a-z0-9]+/g, "_")

/** OpenAI-compatible APIs accept function names of at most 64 characters. */
export const TOOL_NAME_MAX_LENGTH = 64

/**
 * Tools the conversation engine offers itself (end_call always, add_to_do_not_call to workflows
 * that turn it on); an edge or library tool may not take their names, or the model could not tell
 * "end the call" from "follow this edge".
 */
export const RESERVED_TOOL_NAMES: ReadonlyArray<string> = ["end_call", "add_to_do_not_call"]
