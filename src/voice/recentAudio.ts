/** The last `seconds` of a call's line audio, for the end-of-turn model (which reads the last 8 s). */
export interface RecentAudio {
  readonly push: (pcm: Int16Array) => void
  /** A copy of what is kept, oldest first (shorter than the window early in the call). */
  readonly snapshot: () => Int16Array
}

export const recentAudio = (sampleRate: number, seconds: number): RecentAudio => {
  const ring = new Int16Array(sampleRate * seconds)
  let written = 0
  return {
    push: (pcm) => {
      const fresh = pcm.subarray(Math.max(0, pcm.length - ring.length))
      for (let i = 0; i < fresh.length; i++) ring[(written + i) % ring.length] = fresh[i]!
      written += fresh.length
    },
    snapshot: () => {
      if (written <= ring.length) return ring.slice(0, written)
      const start = written % ring.length
      const out = new Int16Array(ring.length)
      out.set(ring.subarray(start))
      out.set(ring.subarray(0, start), ring.length - start)
      return out
    }
  }
}
