import { describe, expect, it } from "vitest"
import {
  defaultTurnTakingSettings,
  heuristicEndpointing,
  mayStillBeBackchannel,
  nextDeadline,
  startTurnTaking,
  stepTurnTaking,
  substantiveWords,
  type TurnCommand,
  type TurnEvent,
  type TurnState,
  type TurnTakingSettings
} from "../src/voice/turnTaking/mod.ts"

/** A call driven event by event; every command the reducer gave is kept with the time it was given. */
const call = (settings: Partial<TurnTakingSettings> = {}, options: { readonly punctuated?: boolean } = {}) => {
  const started = startTurnTaking(0, { settings: { ...defaultTurnTakingSettings, ...settings }, ...options })
  let state: TurnState = started.state
  const log: Array<{ readonly at: number; readonly command: TurnCommand }> = started.commands.map((command) => ({
    at: 0,
    command
  }))
  const send = (event: TurnEvent) => {
    const step = stepTurnTaking(state, event)
    state = step.state
    for (const command of step.commands) log.push({ at: event.at, command })
    return step.commands
  }
  const api = {
    send,
    get state() {
      return state
    },
    log,
    tags: () => log.map((entry) => entry.command._tag),
    /** Ticks every 50 ms from `from` to `to` inclusive (what an interpreter's clock would do). */
    ticks: (from: number, to: number) => {
      for (let at = from; at <= to; at += 50) send({ _tag: "Tick", at })
    },
    commandsOf: <T extends TurnCommand["_tag"]>(tag: T) =>
      log.filter((entry) => entry.command._tag === tag) as Array<
        { readonly at: number; readonly command: Extract<TurnCommand, { _tag: T }> }
      >,
    /** The greeting (generation 1) plays and finishes; `question` says whether it asked one. */
    greeted: (at = 1000, question = false) => {
      send({ _tag: "ReplyAudioStarted", at: 100, generation: 1, interruptible: false })
      send({ _tag: "ReplyCompleted", at, generation: 1, askedQuestion: question, endsCall: false })
    },
    /** The caller says `text` from `start` to `stop`; the transcript settles `lag` ms after they stop. */
    says: (text: string, start: number, stop: number, lag = 100) => {
      send({ _tag: "CallerSpeechStarted", at: start })
      send({ _tag: "CallerSpeechStopped", at: stop })
      send({ _tag: "TranscriptFinal", at: stop + lag, text, settled: true })
    }
  }
  return api
}

const turnsAnswered = (c: ReturnType<typeof call>) =>
  c.commandsOf("TurnEnded").map((entry) => ({ at: entry.at, text: entry.command.decision.text }))

describe("turn-taking: the end of the caller's turn", () => {
  it("answers a complete sentence once the endpointing silence has passed, not before", () => {
    const c = call()
    c.greeted()
    c.says("I'd like to book a table.", 2000, 3000)
    c.ticks(3100, 3450)
    expect(turnsAnswered(c)).toEqual([])
    c.ticks(3500, 3600)
    expect(turnsAnswered(c)).toEqual([{ at: 3500, text: "I'd like to book a table." }])
  })

  it("waits through a pause after unpunctuated words from the first turn when the transcription is known to punctuate", () => {
    const known = call({}, { punctuated: true })
    known.greeted()
    known.says("Could you tell me", 2000, 3000)
    known.ticks(3100, 4150)
    expect(turnsAnswered(known)).toEqual([])
    known.ticks(4200, 4250)
    expect(turnsAnswered(known)).toEqual([{ at: 4200, text: "Could you tell me" }])
    // Not known: the first turn is taken at the plain endpointing (the call has not seen punctuation yet).
    const unknown = call()
    unknown.greeted()
    unknown.says("Could you tell me", 2000, 3000)
    unknown.ticks(3100, 3500)
    expect(turnsAnswered(unknown)).toEqual([{ at: 3500, text: "Could you tell me" }])
  })

  it("prepares the answer during the silence and releases that same reply at the end of the turn", () => {
    const c = call()
    c.greeted()
    c.says("What time do you open?", 2000, 3000)
    const prepared = c.commandsOf("StartReply").at(-1)!
    expect(prepared).toMatchObject({ at: 3100, command: { held: true, text: "What time do you open?" } })
    c.ticks(3150, 3500)
    expect(c.commandsOf("ReleaseReply").map((entry) => entry.command.generation)).toEqual([
      prepared.command.generation
    ])
    expect(c.commandsOf("StartReply")).toHaveLength(2)
  })

  it("waits longer after a sentence that trails off, and answers both halves together, once", () => {
    const c = call()
    c.greeted()
    c.says("I'd like to book a table and", 2000, 3000)
    c.ticks(3100, 3900)
    expect(turnsAnswered(c)).toEqual([])
    c.says("for four people on Friday.", 3950, 5000)
    expect(c.commandsOf("CancelReply").map((entry) => entry.command.reason)).toEqual(["caller-continued"])
    c.ticks(5100, 6000)
    expect(turnsAnswered(c)).toEqual([
      { at: 5500, text: "I'd like to book a table and for four people on Friday." }
    ])
  })

  it("treats a missing final period as unfinished only when this call's transcription punctuates", () => {
    const context = { agentAskedQuestion: false, punctuated: true }
    const settings = defaultTurnTakingSettings
    expect(heuristicEndpointing("I want to change my", context, settings)).toBe(1200)
    expect(heuristicEndpointing("I want to change it", context, settings)).toBe(1200)
    expect(heuristicEndpointing("I want to change it", { ...context, punctuated: false }, settings)).toBe(500)
    expect(heuristicEndpointing("I want to change it.", context, settings)).toBe(500)
    expect(heuristicEndpointing("Yes.", { ...context, agentAskedQuestion: true }, settings)).toBe(250)
    expect(heuristicEndpointing("Yes.", context, settings)).toBe(500)
  })

  it("treats a clause ending in a comma, colon or dash as unfinished, punctuating transcription or not", () => {
    const settings = defaultTurnTakingSettings
    for (const punctuated of [true, false]) {
      const context = { agentAskedQuestion: false, punctuated }
      expect(heuristicEndpointing("I ordered a blue jacket,", context, settings)).toBe(1200)
      expect(heuristicEndpointing("Here is the thing:", context, settings)).toBe(1200)
      expect(heuristicEndpointing("I wanted to say -", context, settings)).toBe(1200)
    }
  })

  it("answers a short yes to the agent's question sooner", () => {
    const c = call()
    c.greeted(1000, true)
    c.says("Yes.", 2000, 2300)
    c.ticks(2400, 2600)
    expect(turnsAnswered(c)).toEqual([{ at: 2550, text: "Yes." }])
  })

  it("delays the reply for a slow transcription instead of dropping the turn", () => {
    const c = call()
    c.greeted()
    c.send({ _tag: "CallerSpeechStarted", at: 2000 })
    c.send({ _tag: "CallerSpeechStopped", at: 3000 })
    c.ticks(3050, 5950)
    expect(turnsAnswered(c)).toEqual([])
    c.send({ _tag: "TranscriptFinal", at: 6000, text: "Can I pay by card?", settled: true })
    expect(turnsAnswered(c)).toEqual([{ at: 6000, text: "Can I pay by card?" }])
    expect(c.commandsOf("SayFallback")).toEqual([])
  })

  it("asks the caller to repeat when no transcript comes within the bound", () => {
    const c = call()
    c.greeted()
    c.send({ _tag: "CallerSpeechStarted", at: 2000 })
    c.send({ _tag: "CallerSpeechStopped", at: 3000 })
    c.ticks(3050, 8100)
    expect(c.commandsOf("SayFallback")).toMatchObject([{ at: 8000, command: { reason: "no-transcript" } }])
    expect(turnsAnswered(c)).toEqual([])
  })

  it("answers the interim words when the final transcript never comes", () => {
    const c = call()
    c.greeted()
    c.send({ _tag: "CallerSpeechStarted", at: 2000 })
    c.send({ _tag: "TranscriptInterim", at: 2600, text: "cancel my order" })
    c.send({ _tag: "CallerSpeechStopped", at: 3000 })
    c.ticks(3050, 8100)
    expect(turnsAnswered(c)).toEqual([{ at: 8000, text: "cancel my order" }])
  })

  it("does not answer noise: a settled empty transcript ends nothing", () => {
    const c = call()
    c.greeted()
    c.says("", 2000, 2300)
    c.ticks(2400, 4000)
    expect(turnsAnswered(c)).toEqual([])
    expect(c.state.caller.stoppedAt).toBeNull()
  })
})

describe("turn-taking: the caller speaking over the agent", () => {
  /** The agent (generation 2) is speaking its answer, which its node lets the caller interrupt. */
  const speaking = (interruptible = true, settings: Partial<TurnTakingSettings> = {}) => {
    const c = call(settings)
    c.greeted()
    c.says("Tell me about your plans.", 2000, 3000)
    c.ticks(3150, 3500)
    c.send({ _tag: "ReplyAudioStarted", at: 3520, generation: 2, interruptible })
    return c
  }

  it("lets a backchannel pass: no pause, no cut, and it does not become a turn", () => {
    const c = speaking()
    c.send({ _tag: "CallerSpeechStarted", at: 5000 })
    c.send({ _tag: "TranscriptInterim", at: 5200, text: "uh-huh" })
    c.ticks(5250, 5400)
    c.send({ _tag: "CallerSpeechStopped", at: 5450 })
    c.send({ _tag: "TranscriptFinal", at: 5550, text: "Uh-huh.", settled: true })
    c.send({ _tag: "ReplyCompleted", at: 9000, generation: 2, askedQuestion: false, endsCall: false })
    c.ticks(9050, 12_000)
    expect(c.tags()).not.toContain("PauseReply")
    expect(c.tags()).not.toContain("CancelReply")
    expect(turnsAnswered(c).map((turn) => turn.text)).toEqual(["Tell me about your plans."])
  })

  it("with interim words, waits for a word that is not a backchannel before pausing the agent", () => {
    const c = speaking()
    c.send({ _tag: "TranscriptInterim", at: 4000, text: "" })
    // A backchannel whose first interim comes after the minimum interruption time: no pause.
    c.send({ _tag: "CallerSpeechStarted", at: 5000 })
    c.ticks(5050, 5400)
    c.send({ _tag: "TranscriptInterim", at: 5450, text: "mm-hmm" })
    c.send({ _tag: "CallerSpeechStopped", at: 5500 })
    c.send({ _tag: "TranscriptFinal", at: 5600, text: "Mm-hmm.", settled: true })
    c.ticks(5650, 6000)
    expect(c.tags()).not.toContain("PauseReply")
    // A real interruption: paused at its first word, sooner than the minimum interruption time (a
    // word is not a cough), cut at its second.
    c.send({ _tag: "CallerSpeechStarted", at: 7000 })
    c.ticks(7050, 7150)
    expect(c.tags()).not.toContain("PauseReply")
    c.send({ _tag: "TranscriptInterim", at: 7200, text: "wait" })
    expect(c.commandsOf("PauseReply")).toMatchObject([{ at: 7200, command: { generation: 2 } }])
    c.send({ _tag: "TranscriptInterim", at: 7600, text: "wait what" })
    expect(c.commandsOf("CancelReply")).toMatchObject([{ at: 7600, command: { reason: "interrupted" } }])
  })

  it("does not pause at the first word of a two-word backchannel revealed by interims", () => {
    const c = speaking()
    c.send({ _tag: "CallerSpeechStarted", at: 5000 })
    c.send({ _tag: "TranscriptInterim", at: 5250, text: "I" })
    c.send({ _tag: "TranscriptInterim", at: 5500, text: "I see" })
    c.send({ _tag: "CallerSpeechStopped", at: 5600 })
    c.send({ _tag: "TranscriptFinal", at: 5700, text: "I see.", settled: true })
    c.ticks(5750, 6000)
    expect(c.tags()).not.toContain("PauseReply")
    // The same first word going on to something else stops the agent at that word.
    c.send({ _tag: "CallerSpeechStarted", at: 7000 })
    c.send({ _tag: "TranscriptInterim", at: 7250, text: "I" })
    expect(c.tags()).not.toContain("PauseReply")
    expect(c.tags()).not.toContain("CancelReply")
    c.send({ _tag: "TranscriptInterim", at: 7500, text: "I think" })
    expect(c.commandsOf("CancelReply")).toMatchObject([{ at: 7500, command: { reason: "interrupted" } }])
  })

  it("stops the agent for a real interruption and answers what the caller said", () => {
    const c = speaking()
    c.send({ _tag: "CallerSpeechStarted", at: 5000 })
    c.send({ _tag: "TranscriptInterim", at: 5250, text: "wait, what" })
    expect(c.commandsOf("PauseReply")).toMatchObject([{ at: 5250, command: { generation: 2 } }])
    c.send({ _tag: "Tick", at: 5300 })
    expect(c.commandsOf("CancelReply")).toMatchObject([{ at: 5300, command: { generation: 2, reason: "interrupted" } }])
    c.send({ _tag: "TranscriptInterim", at: 5600, text: "wait, what does premium include" })
    c.send({ _tag: "CallerSpeechStopped", at: 5900 })
    c.send({ _tag: "TranscriptFinal", at: 6000, text: "Wait, what does premium include?", settled: true })
    c.ticks(6050, 6500)
    expect(turnsAnswered(c).at(-1)).toEqual({ at: 6400, text: "Wait, what does premium include?" })
  })

  it("pauses at once for unclear speech and resumes when it turns out to be noise", () => {
    const c = speaking()
    c.send({ _tag: "CallerSpeechStarted", at: 5000 })
    c.ticks(5050, 5300)
    expect(c.commandsOf("PauseReply")).toMatchObject([{ at: 5300, command: { generation: 2 } }])
    c.send({ _tag: "CallerSpeechStopped", at: 5400 })
    c.send({ _tag: "TranscriptFinal", at: 5500, text: "", settled: true })
    expect(c.commandsOf("ResumeReply")).toMatchObject([{ at: 5500, command: { generation: 2 } }])
    expect(c.tags()).not.toContain("CancelReply")
  })

  it("resumes a paused agent when no words confirm the interruption in time", () => {
    const c = speaking()
    c.send({ _tag: "CallerSpeechStarted", at: 5000 })
    c.ticks(5050, 5400)
    c.send({ _tag: "CallerSpeechStopped", at: 5400 })
    c.ticks(5450, 6850)
    expect(c.commandsOf("ResumeReply")).toEqual([])
    c.ticks(6900, 6900)
    expect(c.commandsOf("ResumeReply")).toMatchObject([{ at: 6900 }])
  })

  it("confirms a one-word interruption once its transcript is in", () => {
    const c = speaking()
    c.send({ _tag: "CallerSpeechStarted", at: 5000 })
    c.send({ _tag: "CallerSpeechStopped", at: 5350 })
    c.send({ _tag: "TranscriptFinal", at: 5450, text: "Stop.", settled: true })
    expect(c.commandsOf("CancelReply")).toMatchObject([{ at: 5450, command: { reason: "interrupted" } }])
    c.ticks(5500, 6000)
    expect(turnsAnswered(c).at(-1)?.text).toBe("Stop.")
  })

  it("never cuts a node that does not allow interruptions, but answers what was said after it", () => {
    const c = speaking(false)
    c.send({ _tag: "CallerSpeechStarted", at: 5000 })
    c.send({ _tag: "TranscriptInterim", at: 5300, text: "I need a refund" })
    c.send({ _tag: "CallerSpeechStopped", at: 5800 })
    c.send({ _tag: "TranscriptFinal", at: 5900, text: "I need a refund.", settled: true })
    c.ticks(5950, 7000)
    expect(c.tags()).not.toContain("PauseReply")
    expect(c.tags()).not.toContain("CancelReply")
    c.send({ _tag: "ReplyCompleted", at: 8000, generation: 2, askedQuestion: false, endsCall: false })
    expect(turnsAnswered(c).at(-1)).toEqual({ at: 8000, text: "I need a refund." })
  })

  it("lets the caller cut into the greeting when its node allows it", () => {
    const c = call()
    c.send({ _tag: "ReplyAudioStarted", at: 100, generation: 1, interruptible: true })
    c.send({ _tag: "CallerSpeechStarted", at: 600 })
    c.send({ _tag: "TranscriptInterim", at: 900, text: "hi is this Acme" })
    c.send({ _tag: "Tick", at: 950 })
    expect(c.commandsOf("CancelReply")).toMatchObject([{ command: { generation: 1, reason: "interrupted" } }])
  })

  it("answers everything when the caller goes on before the answer was heard", () => {
    const c = call()
    c.greeted()
    c.says("I want to move my appointment.", 2000, 3000)
    c.ticks(3050, 3500)
    c.send({ _tag: "CallerSpeechStarted", at: 3600 })
    c.send({ _tag: "TranscriptInterim", at: 3900, text: "to next Tuesday" })
    c.send({ _tag: "Tick", at: 3950 })
    expect(c.commandsOf("CancelReply").at(-1)?.command.reason).toBe("caller-continued")
    c.send({ _tag: "CallerSpeechStopped", at: 4200 })
    c.send({ _tag: "TranscriptFinal", at: 4300, text: "To next Tuesday.", settled: true })
    c.ticks(4350, 4800)
    expect(turnsAnswered(c).at(-1)?.text).toBe("I want to move my appointment. To next Tuesday.")
  })
})

describe("turn-taking: failures and limits", () => {
  it("retries a failed answer once with the same words", () => {
    const c = call()
    c.greeted()
    c.says("Where is my order?", 2000, 3000)
    c.ticks(3150, 3500)
    c.send({ _tag: "ReplyFailed", at: 3700, generation: 2, provider: "llm", reason: "timeout", heard: false })
    expect(c.commandsOf("StartReply").at(-1)).toMatchObject({
      command: { generation: 3, text: "Where is my order?", attempt: 2, held: false }
    })
    expect(c.commandsOf("ProviderFailed")).toMatchObject([{ command: { provider: "llm", reason: "timeout" } }])
    expect(c.tags()).not.toContain("SayFallback")
  })

  it("says the fallback line after the retry fails, and ends politely after repeated failures", () => {
    const c = call()
    c.greeted()
    c.says("Where is my order?", 2000, 3000)
    c.ticks(3150, 3500)
    c.send({ _tag: "ReplyFailed", at: 3700, generation: 2, provider: "tts", reason: "503", heard: false })
    c.send({ _tag: "ReplyFailed", at: 3900, generation: 3, provider: "tts", reason: "503", heard: false })
    expect(c.commandsOf("SayFallback")).toMatchObject([{ command: { generation: 4, reason: "provider-failed" } }])
    c.send({ _tag: "ReplyFailed", at: 4100, generation: 4, provider: "tts", reason: "503", heard: false })
    expect(c.commandsOf("EndCall")).toMatchObject([{ command: { reason: "provider_failures", goodbye: true } }])
    expect(c.state.ended).toBe(true)
  })

  it("does not answer the words again after asking the caller to repeat them", () => {
    const c = call()
    c.greeted()
    c.says("Where is my order?", 2000, 3000)
    // The answer prepared during the silence fails, and so does its retry, before the turn has ended.
    c.send({ _tag: "ReplyFailed", at: 3150, generation: 2, provider: "llm", reason: "503", heard: false })
    c.send({ _tag: "ReplyFailed", at: 3250, generation: 3, provider: "llm", reason: "503", heard: false })
    expect(c.commandsOf("SayFallback")).toMatchObject([{ command: { generation: 4 } }])
    c.send({ _tag: "ReplyAudioStarted", at: 3300, generation: 4, interruptible: true })
    c.send({ _tag: "ReplyCompleted", at: 5000, generation: 4, askedQuestion: true, endsCall: false })
    c.ticks(5050, 8000)
    expect(turnsAnswered(c)).toEqual([])
    expect(c.commandsOf("StartReply")).toHaveLength(3)
  })

  it("stops the reply and ends when the caller hangs up", () => {
    const c = call()
    c.send({ _tag: "CallerHungUp", at: 500 })
    expect(c.log.slice(1).map((entry) => entry.command)).toEqual([
      { _tag: "CancelReply", generation: 1, reason: "call-ended" },
      { _tag: "EndCall", reason: "user_hangup", goodbye: false }
    ])
    expect(c.send({ _tag: "Tick", at: 600 })).toEqual([])
  })

  it("ends an idle call even while a background voice keeps voice detection busy", () => {
    const c = call({ idleTimeoutMs: 10_000 })
    c.greeted(1000)
    c.send({ _tag: "CallerSpeechStarted", at: 2000 })
    c.ticks(2050, 10_950)
    expect(c.commandsOf("EndCall")).toEqual([])
    c.ticks(11_000, 11_000)
    expect(c.commandsOf("EndCall")).toMatchObject([{ at: 11_000, command: { reason: "idle_timeout" } }])
  })

  it("ends at the maximum duration even mid-sentence", () => {
    const c = call({ maxDurationMs: 5000 })
    c.greeted()
    c.send({ _tag: "CallerSpeechStarted", at: 4000 })
    c.send({ _tag: "TranscriptInterim", at: 4500, text: "and another thing" })
    c.ticks(4550, 5000)
    expect(c.commandsOf("EndCall")).toMatchObject([{ at: 5000, command: { reason: "max_duration_exceeded" } }])
  })

  it("tells the interpreter when to look again, so no tick is needed between events", () => {
    const c = call()
    c.greeted()
    c.says("I'd like to book a table.", 2000, 3000)
    expect(nextDeadline(c.state)).toBe(3500)
    c.send({ _tag: "Tick", at: 3500 })
    expect(turnsAnswered(c)).toHaveLength(1)
  })
})

describe("backchannels", () => {
  it("are told from words that carry meaning, in the call's language", () => {
    expect(substantiveWords("Uh-huh.", "en")).toEqual([])
    expect(substantiveWords("yeah yeah, all right", "en-GB")).toEqual([])
    expect(substantiveWords("okay but what about Friday", "en")).toEqual(["but", "what", "about", "friday"])
    expect(substantiveWords("Genau.", "de")).toEqual([])
    expect(substantiveWords("Ja, aber nicht heute", "de")).toEqual(["aber", "nicht", "heute"])
  })

  it("knows the first word of a two-word backchannel may still become one", () => {
    expect(mayStillBeBackchannel("I", "en")).toBe(true)
    expect(mayStillBeBackchannel("yeah, got", "en")).toBe(true)
    expect(mayStillBeBackchannel("I think", "en")).toBe(false)
    expect(mayStillBeBackchannel("wait", "en")).toBe(false)
    expect(mayStillBeBackchannel("but I", "en")).toBe(false)
    expect(mayStillBeBackchannel("", "en")).toBe(false)
  })
})

describe("turn-taking: the end-of-turn model's verdict", () => {
  /** The caller speaks from `start` to `stop`; the model answers `complete` at `answeredAt`, the words at stop + 100. */
  const saysJudged = (
    c: ReturnType<typeof call>,
    text: string,
    start: number,
    stop: number,
    complete: number,
    answeredAt = stop + 60
  ) => {
    c.send({ _tag: "CallerSpeechStarted", at: start })
    c.send({ _tag: "CallerSpeechStopped", at: stop })
    c.send({ _tag: "TurnPrediction", at: answeredAt, speechStoppedAt: stop, complete })
    c.send({ _tag: "TranscriptFinal", at: stop + 100, text, settled: true })
  }

  it("is asked about each stop of the caller's speech, with the time of that stop", () => {
    const c = call()
    c.greeted()
    c.send({ _tag: "CallerSpeechStarted", at: 2000 })
    c.send({ _tag: "CallerSpeechStopped", at: 3000 })
    expect(c.commandsOf("PredictTurnEnd").map((entry) => entry.command)).toEqual([
      { _tag: "PredictTurnEnd", speechStoppedAt: 3000 }
    ])
  })

  it("'complete' ends the turn after the ordinary endpointing, though the words trail off", () => {
    const c = call()
    c.greeted()
    saysJudged(c, "I would like a table and", 2000, 3000, 0.9)
    c.ticks(3100, 3450)
    expect(turnsAnswered(c)).toEqual([])
    c.ticks(3500, 3500)
    expect(turnsAnswered(c)).toEqual([{ at: 3500, text: "I would like a table and" }])
    expect(c.commandsOf("TurnEnded")[0]!.command.decision.endpointingMs).toBe(500)
  })

  it("'incomplete' waits the longer unfinished-sentence delay, though the sentence sounds finished", () => {
    const c = call()
    c.greeted()
    saysJudged(c, "I'd like to book a table.", 2000, 3000, 0.2)
    c.ticks(3100, 4150)
    expect(turnsAnswered(c)).toEqual([])
    c.ticks(4200, 4200)
    expect(turnsAnswered(c)).toEqual([{ at: 4200, text: "I'd like to book a table." }])
  })

  it("'incomplete' keeps the turn open for a caller who goes on: everything they said is answered once", () => {
    const c = call()
    c.greeted()
    saysJudged(c, "I'd like to book a table.", 2000, 3000, 0.2)
    c.ticks(3100, 3800)
    c.says("For four people.", 3850, 4600)
    // The new pause has no verdict of its own (the model has not answered): the heuristic's 500 ms.
    c.ticks(4700, 5200)
    expect(turnsAnswered(c)).toEqual([{ at: 5100, text: "I'd like to book a table. For four people." }])
  })

  it("takes 0.5 itself as complete", () => {
    const c = call()
    c.greeted()
    saysJudged(c, "So", 2000, 3000, 0.5)
    c.ticks(3100, 3500)
    expect(turnsAnswered(c)).toEqual([{ at: 3500, text: "So" }])
  })

  it("ignores an answer about a stop the caller has talked past: the heuristic decides the new pause", () => {
    const c = call()
    c.greeted()
    c.send({ _tag: "CallerSpeechStarted", at: 2000 })
    c.send({ _tag: "CallerSpeechStopped", at: 2600 })
    c.send({ _tag: "CallerSpeechStarted", at: 2800 })
    c.send({ _tag: "CallerSpeechStopped", at: 3000 })
    c.send({ _tag: "TurnPrediction", at: 3050, speechStoppedAt: 2600, complete: 0.99 })
    c.send({ _tag: "TranscriptFinal", at: 3100, text: "I would like a table and", settled: true })
    c.ticks(3150, 4150)
    expect(turnsAnswered(c)).toEqual([])
    c.ticks(4200, 4200)
    expect(turnsAnswered(c)).toEqual([{ at: 4200, text: "I would like a table and" }])
  })

  it("leaves the turn to the heuristic until it answers, and to its own verdict from then on", () => {
    const c = call()
    c.greeted()
    c.send({ _tag: "CallerSpeechStarted", at: 2000 })
    c.send({ _tag: "CallerSpeechStopped", at: 3000 })
    c.send({ _tag: "TranscriptFinal", at: 3100, text: "I would like a table and", settled: true })
    expect(nextDeadline(c.state)).toBe(4200)
    c.send({ _tag: "TurnPrediction", at: 3150, speechStoppedAt: 3000, complete: 0.8 })
    expect(nextDeadline(c.state)).toBe(3500)
  })
})
