import { describe, expect, it } from "vitest"
import { echoGate } from "../src/voice/echoGate.ts"

const RATE = 8000
const FRAME = 160

/** Speech-like audio: a tone whose loudness rises and falls like syllables, seeded. */
const syllables = (frames: number, seed: number, level = 8000) => {
  let state = seed
  const random = () => ((state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff)
  const out: Array<Int16Array> = []
  let envelope = 0
  for (let frame = 0; frame < frames; frame++) {
    if (frame % 8 === 0) envelope = random() < 0.3 ? 0 : 0.2 + 0.8 * random()
    out.push(Int16Array.from({ length: FRAME }, (_, i) => {
      const t = (frame * FRAME + i) / RATE
      return Math.round(level * envelope * Math.sin(2 * Math.PI * (180 + 40 * Math.sin(t)) * t))
    }))
  }
  return out
}

/** Feeds the line frame by frame; answers each frame's verdict by its time, and how late it was released. */
const judging = () => {
  const gate = echoGate()
  const verdicts = new Map<number, boolean>()
  const delays: Array<number> = []
  return {
    gate,
    verdicts,
    delays,
    line: (pcm: Int16Array, atMs: number) => {
      for (const frame of gate.line(pcm, atMs)) {
        verdicts.set(frame.atMs, frame.echo)
        delays.push(atMs - frame.atMs)
      }
    }
  }
}

const scaled = (frame: Int16Array, gain: number) => Int16Array.from(frame, (sample) => Math.round(sample * gain))
const mixed = (a: Int16Array, b: Int16Array) => Int16Array.from(a, (sample, i) => sample + b[i]!)

describe("echo gate", () => {
  it("holds back the agent's voice coming back at a delay, from its first words", () => {
    const { gate, line, verdicts } = judging()
    const agent = syllables(400, 7)
    const delay = 6 // frames: 120 ms
    for (let frame = 0; frame < agent.length; frame++) {
      gate.agent(agent[frame]!, frame * 20)
      line(frame >= delay ? scaled(agent[frame - delay]!, 0.2) : new Int16Array(FRAME), frame * 20)
    }
    // Every frame carrying audible echo, the first 400 ms included (before the path could be found).
    const audible = Array.from({ length: agent.length - delay }, (_, i) => i + delay)
      .filter((frame) => Math.max(...agent[frame - delay]!) > 500)
    const firstWords = audible.filter((frame) => frame < 40)
    expect(firstWords.length).toBeGreaterThan(15)
    expect(firstWords.every((frame) => verdicts.get(frame * 20) === true)).toBe(true)
    expect(audible.filter((frame) => verdicts.get(frame * 20)).length / audible.length).toBeGreaterThan(0.95)
  })

  it("holds the line only while the first echo path is looked for, and loses or reorders nothing", () => {
    const { gate, line, verdicts, delays } = judging()
    const agent = syllables(400, 7)
    const caller = syllables(400, 99)
    for (let frame = 0; frame < agent.length; frame++) {
      gate.agent(agent[frame]!, frame * 20)
      line(frame % 100 < 30 ? caller[frame]! : new Int16Array(FRAME), frame * 20)
    }
    expect([...verdicts.keys()]).toEqual(Array.from({ length: agent.length }, (_, frame) => frame * 20))
    expect(Math.max(...delays)).toBeLessThanOrEqual(1500)
    // Once judged (no echo on this line), every later frame is released as it arrives.
    expect(delays.slice(100).every((delay) => delay === 0)).toBe(true)
  })

  it("keeps the echo path found for the next reply, after the agent was silent", () => {
    const { gate, line, verdicts } = judging()
    const agent = syllables(300, 7)
    const delay = 6
    const silentFrom = 150
    const silentTo = 300 // 3 s without the agent: more than the window the path is found in
    const agentAt = (frame: number) =>
      frame < silentFrom ? agent[frame]! : frame >= silentTo ? agent[frame - silentTo]! : new Int16Array(FRAME)
    for (let frame = 0; frame < 450; frame++) {
      gate.agent(agentAt(frame), frame * 20)
      line(frame >= delay ? scaled(agentAt(frame - delay), 0.2) : new Int16Array(FRAME), frame * 20)
    }
    const nextReply = Array.from({ length: 30 }, (_, i) => silentTo + delay + i)
      .filter((frame) => Math.max(...agentAt(frame - delay)) > 500)
    expect(nextReply.length).toBeGreaterThan(10)
    expect(nextReply.every((frame) => verdicts.get(frame * 20) === true)).toBe(true)
  })

  it("lets the caller through when they speak over the echo", () => {
    const { gate, line, verdicts } = judging()
    const agent = syllables(400, 7)
    const caller = syllables(400, 99, 12_000)
    const delay = 6
    const speakingFrames: Array<number> = []
    for (let frame = 0; frame < agent.length; frame++) {
      gate.agent(agent[frame]!, frame * 20)
      const back = frame >= delay ? scaled(agent[frame - delay]!, 0.2) : new Int16Array(FRAME)
      const speaking = frame >= 250 && frame < 330 && Math.max(...caller[frame]!) > 3000
      line(speaking ? mixed(back, caller[frame]!) : back, frame * 20)
      if (speaking) speakingFrames.push(frame)
    }
    const callerFrames = speakingFrames.length
    const passed = speakingFrames.filter((frame) => verdicts.get(frame * 20) === false).length
    expect(callerFrames).toBeGreaterThan(20)
    expect(passed / callerFrames).toBeGreaterThan(0.9)
  })

  it("never holds anything back on a line without echo, even while the agent speaks", () => {
    const { gate, line, verdicts } = judging()
    const agent = syllables(400, 7)
    const caller = syllables(400, 99)
    for (let frame = 0; frame < agent.length; frame++) {
      gate.agent(agent[frame]!, frame * 20)
      // The caller talks now and then, on their own rhythm (a backchannel, a question).
      line(frame % 100 < 30 ? caller[frame]! : new Int16Array(FRAME), frame * 20)
    }
    expect(verdicts.size).toBe(agent.length)
    expect([...verdicts.values()].some(Boolean)).toBe(false)
  })
})
