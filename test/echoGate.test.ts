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

const scaled = (frame: Int16Array, gain: number) => Int16Array.from(frame, (sample) => Math.round(sample * gain))
const mixed = (a: Int16Array, b: Int16Array) => Int16Array.from(a, (sample, i) => sample + b[i]!)

describe("echo gate", () => {
  it("holds back the agent's voice coming back at a delay, once the echo path is found", () => {
    const gate = echoGate()
    const agent = syllables(400, 7)
    const delay = 6 // frames: 120 ms
    let echoed = 0
    let judged = 0
    for (let frame = 0; frame < agent.length; frame++) {
      gate.agent(agent[frame]!, frame * 20)
      const back = frame >= delay ? scaled(agent[frame - delay]!, 0.2) : new Int16Array(FRAME)
      const echo = gate.isEcho(back, frame * 20)
      if (frame >= 150 && Math.max(...agent[frame - delay]!) > 500) {
        judged++
        if (echo) echoed++
      }
    }
    expect(echoed / judged).toBeGreaterThan(0.95)
  })

  it("lets the caller through when they speak over the echo", () => {
    const gate = echoGate()
    const agent = syllables(400, 7)
    const caller = syllables(400, 99, 12_000)
    const delay = 6
    let passed = 0
    let callerFrames = 0
    for (let frame = 0; frame < agent.length; frame++) {
      gate.agent(agent[frame]!, frame * 20)
      const back = frame >= delay ? scaled(agent[frame - delay]!, 0.2) : new Int16Array(FRAME)
      const speaking = frame >= 250 && frame < 330 && Math.max(...caller[frame]!) > 3000
      const line = speaking ? mixed(back, caller[frame]!) : back
      const echo = gate.isEcho(line, frame * 20)
      if (speaking) {
        callerFrames++
        if (!echo) passed++
      }
    }
    expect(callerFrames).toBeGreaterThan(20)
    expect(passed / callerFrames).toBeGreaterThan(0.9)
  })

  it("never holds anything back on a line without echo, even while the agent speaks", () => {
    const gate = echoGate()
    const agent = syllables(400, 7)
    const caller = syllables(400, 99)
    for (let frame = 0; frame < agent.length; frame++) {
      gate.agent(agent[frame]!, frame * 20)
      // The caller talks now and then, on their own rhythm (a backchannel, a question).
      const line = frame % 100 < 30 ? caller[frame]! : new Int16Array(FRAME)
      expect(gate.isEcho(line, frame * 20)).toBe(false)
    }
  })
})
