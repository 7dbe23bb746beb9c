import { DIAL_STRING } from "../audio/dtmfTones.ts"

/**
 * The send_dtmf tool: the agent presses keys on a call (to get through a phone menu, to enter an
 * extension or a PIN it was given). Its keys are played into the call as tones.
 */
export const SEND_DTMF_PARAMETERS = {
  type: "object",
  properties: {
    digits: {
      type: "string",
      description: "The keys to press, in order: 0-9, *, #, A-D; w waits half a second (e.g. \"1w2345#\").",
      pattern: DIAL_STRING.source
    }
  },
  required: ["digits"],
  additionalProperties: false
} as const

/** The keys of a send_dtmf call, or what is wrong with its arguments (told to the model). */
export const dialStringOf = (
  args: Readonly<Record<string, unknown>>
): { readonly digits: string } | { readonly error: string } => {
  const digits = args["digits"]
  if (typeof digits !== "string") return { error: "\"digits\" (a string of keys) is required" }
  if (!DIAL_STRING.test(digits)) {
    return { error: "\"digits\" may hold only 0-9, *, #, A-D and w (a pause), at most 64 of them" }
  }
  return { digits }
}
