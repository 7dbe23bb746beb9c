import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import {
  defaultKeypadSettings,
  emptyKeypad,
  keypadDeadline,
  type KeypadEntry,
  keypadEntryText,
  type KeypadSettings,
  type KeypadState,
  keypadTick,
  pressKey
} from "../src/voice/keypadEntry.ts"
import { defaultTurnTakingSettings, startTurnTaking, stepTurnTaking } from "../src/voice/turnTaking/mod.ts"

/**
 * A caller at the keypad on the test clock: each press and each timer firing is dated by
 * `Clock`, as the call's interpreter dates them; every finished entry is collected.
 */
const keypadOnTestClock = (settings: KeypadSettings) => {
  let state: KeypadState = emptyKeypad
  const entries: Array<{ readonly at: number; readonly entry: KeypadEntry }> = []
  const press = (keys: string) =>
    Effect.gen(function*() {
      for (const key of keys) {
        const at = yield* Clock.currentTimeMillis
        const step = pressKey(state, key, at, settings)
        state = step.state
        if (step.entry !== null) entries.push({ at, entry: step.entry })
      }
    })
  /** Time passes; the timer fires at the machine's deadline if that comes first. */
  const wait = (ms: number) =>
    Effect.gen(function*() {
      const until = (yield* Clock.currentTimeMillis) + ms
      const deadline = keypadDeadline(state, settings)
      if (deadline !== null && deadline <= until) {
        yield* TestClock.adjust(deadline - (yield* Clock.currentTimeMillis))
        const step = keypadTick(state, yield* Clock.currentTimeMillis, settings)
        state = step.state
        if (step.entry !== null) entries.push({ at: deadline, entry: step.entry })
      }
      yield* TestClock.adjust(until - (yield* Clock.currentTimeMillis))
    })
  return { press, wait, entries, pending: () => state.keys }
}

describe("collect digits", () => {
  it.effect("ends an entry at its count of digits, at once", () =>
    Effect.gen(function*() {
      const pad = keypadOnTestClock({ maxDigits: 4, terminator: "#", interDigitTimeoutMs: 3000 })
      yield* pad.press("12")
      yield* pad.wait(500)
      yield* pad.press("34")
      expect(pad.entries).toEqual([{ at: 500, entry: { digits: "1234", end: "max_digits" } }])
      yield* pad.press("5")
      expect(pad.pending()).toBe("5")
    }))

  it.effect("ends an entry at the terminator, which is not part of it", () =>
    Effect.gen(function*() {
      const pad = keypadOnTestClock({ maxDigits: 10, terminator: "#", interDigitTimeoutMs: 3000 })
      yield* pad.press("40")
      yield* pad.wait(1000)
      yield* pad.press("2#")
      expect(pad.entries).toEqual([{ at: 1000, entry: { digits: "402", end: "terminator" } }])
    }))

  it.effect("ends an entry when the caller pauses longer than the inter-digit timeout, not a millisecond before", () =>
    Effect.gen(function*() {
      const pad = keypadOnTestClock({ maxDigits: 6, terminator: "#", interDigitTimeoutMs: 2000 })
      yield* pad.press("9")
      yield* pad.wait(1999)
      yield* pad.press("8")
      yield* pad.wait(1999)
      expect(pad.entries).toEqual([])
      yield* pad.wait(1)
      expect(pad.entries).toEqual([{ at: 3999, entry: { digits: "98", end: "timeout" } }])
      // The timer is not armed again with nothing pressed.
      yield* pad.wait(10_000)
      expect(pad.entries).toHaveLength(1)
    }))

  it.effect("without a collect step, a menu choice is one key once the caller stops pressing", () =>
    Effect.gen(function*() {
      const pad = keypadOnTestClock(defaultKeypadSettings)
      yield* pad.press("1")
      yield* pad.wait(5000)
      expect(pad.entries).toEqual([{ at: 1500, entry: { digits: "1", end: "timeout" } }])
    }))

  it("ignores anything that is not a keypad key, and a terminator alone is an empty answer", () => {
    const settings: KeypadSettings = { maxDigits: 3, terminator: "*", interDigitTimeoutMs: 1000 }
    expect(pressKey(emptyKeypad, "x", 0, settings)).toEqual({ state: emptyKeypad, entry: null })
    expect(pressKey(emptyKeypad, "12", 0, settings)).toEqual({ state: emptyKeypad, entry: null })
    expect(pressKey(emptyKeypad, "*", 0, settings).entry).toEqual({ digits: "", end: "terminator" })
    // With `*` as terminator, `#` is an ordinary key.
    expect(pressKey(emptyKeypad, "#", 5, settings).state).toEqual({ keys: "#", lastAt: 5 })
  })

  it("says the keys for the model", () => {
    expect(keypadEntryText({ digits: "1", end: "timeout" })).toBe("The caller pressed 1 on the keypad.")
    expect(keypadEntryText({ digits: "402", end: "terminator" })).toBe("The caller pressed 4 0 2 on the keypad.")
    expect(keypadEntryText({ digits: "", end: "terminator" })).toBe("The caller pressed # on the keypad.")
  })
})

describe("turn-taking: a keypad entry", () => {
  it("is a whole turn at once: the agent's reply is cut and the entry answered, marked as keys", () => {
    const started = startTurnTaking(0, { settings: defaultTurnTakingSettings })
    let state = stepTurnTaking(started.state, {
      _tag: "ReplyAudioStarted",
      at: 100,
      generation: 1,
      interruptible: false
    }).state
    const step = stepTurnTaking(state, {
      _tag: "KeypadEntry",
      at: 900,
      digits: "2",
      text: "The caller pressed 2 on the keypad."
    })
    state = step.state
    expect(step.commands).toEqual([
      { _tag: "CancelReply", generation: 1, reason: "interrupted" },
      { _tag: "EchoGuard", on: false },
      {
        _tag: "TurnEnded",
        decision: {
          generation: 2,
          text: "The caller pressed 2 on the keypad.",
          speechStartedAt: 900,
          speechStoppedAt: 900,
          transcriptAt: null,
          decidedAt: 900,
          endpointingMs: 0,
          keypad: "2"
        }
      },
      { _tag: "StartReply", generation: 2, text: "The caller pressed 2 on the keypad.", held: false, attempt: 1 }
    ])
    expect(state.agent).toMatchObject({ kind: "replying", generation: 2, held: false })
  })
})
