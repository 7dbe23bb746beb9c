import type { CalleeReport } from "./fakeCallee.ts"

/** A stereo 16-bit WAV of a call as the callee's line recorded it: callee left, agent (as heard) right. */
export const calleeWav = (report: CalleeReport): Uint8Array => {
  const frames = Math.max(report.callee.length, report.agent.length)
  const dataBytes = frames * 4
  const bytes = new Uint8Array(44 + dataBytes)
  const view = new DataView(bytes.buffer)
  const ascii = (at: number, text: string) => [...text].forEach((char, i) => view.setUint8(at + i, char.charCodeAt(0)))
  ascii(0, "RIFF")
  view.setUint32(4, 36 + dataBytes, true)
  ascii(8, "WAVE")
  ascii(12, "fmt ")
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true)
  view.setUint16(22, 2, true)
  view.setUint32(24, report.sampleRate, true)
  view.setUint32(28, report.sampleRate * 4, true)
  view.setUint16(32, 4, true)
  view.setUint16(34, 16, true)
  ascii(36, "data")
  view.setUint32(40, dataBytes, true)
  for (let i = 0; i < frames; i++) {
    view.setInt16(44 + i * 4, report.callee[i] ?? 0, true)
    view.setInt16(46 + i * 4, report.agent[i] ?? 0, true)
  }
  return bytes
}

/**
 * For each callee line that finished, how long the callee heard nothing before the agent's next
 * burst began (end of caller speech → first audible agent audio, on the callee's clock); null when
 * the agent never answered it.
 */
export const responseLatencies = (
  report: CalleeReport
): ReadonlyArray<{ readonly text: string; readonly latencyMs: number | null }> =>
  report.utterances.flatMap(({ text, endMs }) => {
    if (endMs === null) return []
    const reply = report.agentBursts.find((burst) => burst.startMs >= endMs)
    return [{ text, latencyMs: reply === undefined ? null : reply.startMs - endMs }]
  })
