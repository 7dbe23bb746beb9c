/**
 * What the person who answers a test call does, step by step. Steps run in order on the callee's
 * 20 ms media clock; between utterances the callee sends silence, as a phone line does.
 */
export type CalleeStep =
  /** Speak a line (eSpeak NG), then go on once it has been sent. */
  | { readonly say: string }
  /**
   * Wait until the agent has been heard since the callee last started speaking (or pressed a key), and has then been
   * quiet for `quietMs`. Gives up after `timeoutMs` (default 20 s) and records a timeout.
   */
  | { readonly waitForAgent: { readonly quietMs: number; readonly timeoutMs?: number } }
  /** Play a steady tone (an answering machine's beep), then go on once it has been sent. */
  | { readonly tone: { readonly hz: number; readonly ms: number } }
  /** Stay silent for this many milliseconds. */
  | { readonly silence: number }
  /** Wait until the agent has been audible for `afterAgentMs` without a pause, then speak over it. */
  | { readonly bargeIn: { readonly afterAgentMs: number; readonly say: string; readonly timeoutMs?: number } }
  /** Press a key. */
  | { readonly dtmf: string }
  /** End the call: the carrier's stop message (where it has one), then the socket closes. */
  | { readonly hangUp: true }

export type CalleeScript = ReadonlyArray<CalleeStep>

/** The lines a script speaks, to render before the call's real-time clock starts. */
export const scriptLines = (script: CalleeScript): ReadonlyArray<string> =>
  script.flatMap((step) => ("say" in step ? [step.say] : "bargeIn" in step ? [step.bargeIn.say] : []))
