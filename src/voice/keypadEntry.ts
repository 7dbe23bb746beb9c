/**
 * Keys the caller presses, gathered into entries: a menu choice ("1"), an account number
 * ("40213"), a PIN ended with `#`. Pure: time is the `at` each press and tick carries, so every rule
 * is tested with plain numbers (and with `TestClock` through the call's own clock).
 */

/** The keys of a telephone keypad (A–D are the fourth column some phones and IVRs have). */
export const KEYPAD_KEYS = "0123456789*#ABCD"

export const isKeypadKey = (key: string) => key.length === 1 && KEYPAD_KEYS.includes(key)

export interface KeypadSettings {
  /** An entry is complete at this many keys (null: no count, only the terminator or the pause end it). */
  readonly maxDigits: number | null
  /** The key that ends an entry early (it is not part of the entry); null: none. */
  readonly terminator: "#" | "*" | null
  /** The caller stopped pressing for this long: what they pressed is the entry. */
  readonly interDigitTimeoutMs: number
}

/**
 * Without a collect-digits step, keys are gathered until the caller pauses (or presses `#`), so a
 * number typed without being asked still arrives as one entry, while a menu choice arrives promptly.
 */
export const defaultKeypadSettings: KeypadSettings = {
  maxDigits: null,
  terminator: "#",
  interDigitTimeoutMs: 1500
}

export interface KeypadState {
  readonly keys: string
  /** When the last key was pressed (null: nothing pressed since the last entry). */
  readonly lastAt: number | null
}

export const emptyKeypad: KeypadState = { keys: "", lastAt: null }

/** How an entry ended: its count reached, its terminator pressed, or the caller paused. */
export type EntryEnd = "max_digits" | "terminator" | "timeout"

export interface KeypadEntry {
  /** The keys of the entry, without the terminator. */
  readonly digits: string
  readonly end: EntryEnd
}

export interface KeypadStep {
  readonly state: KeypadState
  readonly entry: KeypadEntry | null
}

/** A key pressed at `at`. Anything that is not a keypad key changes nothing. */
export const pressKey = (state: KeypadState, key: string, at: number, settings: KeypadSettings): KeypadStep => {
  if (!isKeypadKey(key)) return { state, entry: null }
  if (settings.terminator !== null && key === settings.terminator) {
    // A terminator alone is still an answer ("press pound to skip"): it is an empty entry.
    return { state: emptyKeypad, entry: { digits: state.keys, end: "terminator" } }
  }
  const keys = state.keys + key
  if (settings.maxDigits !== null && keys.length >= settings.maxDigits) {
    return { state: emptyKeypad, entry: { digits: keys, end: "max_digits" } }
  }
  return { state: { keys, lastAt: at }, entry: null }
}

/** When the keys pressed so far become an entry if no other key comes (null: nothing pending). */
export const keypadDeadline = (state: KeypadState, settings: KeypadSettings): number | null =>
  state.lastAt === null ? null : state.lastAt + settings.interDigitTimeoutMs

/** The clock reached `at`: keys whose pause has run out are an entry. */
export const keypadTick = (state: KeypadState, at: number, settings: KeypadSettings): KeypadStep => {
  const deadline = keypadDeadline(state, settings)
  if (deadline === null || at < deadline) return { state, entry: null }
  return { state: emptyKeypad, entry: { digits: state.keys, end: "timeout" } }
}

/** What the model is told the caller did (and what the transcript shows for the caller's turn). */
export const keypadEntryText = (entry: KeypadEntry): string => {
  if (entry.digits === "") return `The caller pressed ${entry.end === "terminator" ? "#" : "nothing"} on the keypad.`
  const keys = entry.digits.length === 1 ? entry.digits : entry.digits.split("").join(" ")
  return `The caller pressed ${keys} on the keypad.`
}
