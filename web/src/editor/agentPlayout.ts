import { CALL_SAMPLE_RATE } from "./pcm16Resampler.ts"

/** Audio queued before the first packet plays: enough to ride out network jitter, little enough not to be heard as delay. */
const LEAD_SECONDS = 0.06

export interface AgentPlayout {
  readonly play: (pcm: Int16Array) => void
  /** `onPlayed(name)` once everything queued before it has played (or was cleared). */
  readonly mark: (name: string) => void
  /** Drops every queued packet now (the caller spoke over the agent) and answers the pending marks. */
  readonly clear: () => void
  readonly speaking: () => boolean
  readonly close: () => void
}

/**
 * The agent's PCM16 16 kHz packets, played back to back: each is scheduled where the previous one
 * ends, so packets arriving early queue without gaps, and a late one starts a small lead after now.
 */
export const agentPlayout = (context: AudioContext, onPlayed: (name: string) => void): AgentPlayout => {
  let playingUntil = 0
  let sources = new Set<AudioBufferSourceNode>()
  const marks = new Map<string, ReturnType<typeof setTimeout>>()

  const answer = (name: string) => {
    const timer = marks.get(name)
    if (timer === undefined) return
    clearTimeout(timer)
    marks.delete(name)
    onPlayed(name)
  }

  return {
    play: (pcm) => {
      const buffer = context.createBuffer(1, pcm.length, CALL_SAMPLE_RATE)
      buffer.getChannelData(0).set(Float32Array.from(pcm, (sample) => sample / 32768))
      const source = context.createBufferSource()
      source.buffer = buffer
      source.connect(context.destination)
      playingUntil = Math.max(playingUntil, context.currentTime + LEAD_SECONDS)
      source.start(playingUntil)
      playingUntil += buffer.duration
      sources.add(source)
      source.onended = () => sources.delete(source)
    },
    mark: (name) => {
      const waitMs = Math.max(0, playingUntil - context.currentTime) * 1000
      marks.set(name, setTimeout(() => answer(name), waitMs))
    },
    clear: () => {
      sources.forEach((source) => source.stop())
      sources = new Set()
      playingUntil = context.currentTime
      ;[...marks.keys()].forEach(answer)
    },
    speaking: () => playingUntil > context.currentTime,
    close: () => {
      marks.forEach((timer) => clearTimeout(timer))
      marks.clear()
      sources.forEach((source) => source.stop())
    }
  }
}
