/**
 * A carrier's play-out of the agent's audio to the callee's handset: audio queues as it arrives and
 * drains one frame per 20 ms tick; a mark is answered once every sample queued before it has
 * played; a clear drops the queue and answers every pending mark at once, as Twilio and Telnyx
 * document (or forgets them, for a carrier that does not).
 */
export interface PlayoutMark {
  readonly name: string
  readonly receivedAtMs: number
  readonly answeredAtMs: number | null
  /** Answered (or dropped) because a clear came before its audio had played. */
  readonly cleared: boolean
}

interface HandsetPlayout {
  readonly audio: (pcm: Int16Array, atMs: number) => void
  readonly mark: (name: string, atMs: number) => void
  /** Empties the queue; returns how many milliseconds of audio were dropped. */
  readonly clear: (atMs: number) => number
  /**
   * The frame that plays from `frameMs` (only audio that had arrived by then), after answering the
   * marks whose audio finished with the previous frame; `nowMs` is when that happens.
   */
  readonly play: (frameMs: number, nowMs: number) => Int16Array
  readonly marks: () => ReadonlyArray<PlayoutMark>
}

export const handsetPlayout = (options: {
  readonly frameSamples: number
  readonly sampleRate: number
  readonly marksOnClear: "echo" | "drop"
  /** Sends the carrier's "this mark has played" message. */
  readonly answer: (name: string) => void
}): HandsetPlayout => {
  const { frameSamples, sampleRate } = options
  const queue: Array<{ readonly pcm: Int16Array; readonly arrivalMs: number }> = []
  let headOffset = 0
  let queuedSamples = 0
  let playedSamples = 0
  const marks: Array<
    { name: string; position: number; receivedAtMs: number; answeredAtMs: number | null; cleared: boolean }
  > = []

  const answerDue = (atMs: number, cleared: boolean) => {
    for (const mark of marks) {
      if (mark.answeredAtMs !== null || mark.cleared || (!cleared && mark.position > playedSamples)) continue
      mark.cleared = cleared
      if (cleared && options.marksOnClear === "drop") continue
      mark.answeredAtMs = atMs
      options.answer(mark.name)
    }
  }

  return {
    audio: (pcm, atMs) => {
      queue.push({ pcm, arrivalMs: atMs })
      queuedSamples += pcm.length
    },
    mark: (name, atMs) => {
      marks.push({ name, position: queuedSamples, receivedAtMs: atMs, answeredAtMs: null, cleared: false })
      answerDue(atMs, false)
    },
    clear: (atMs) => {
      const dropped = queuedSamples - playedSamples
      queue.length = 0
      headOffset = 0
      playedSamples = queuedSamples
      answerDue(atMs, true)
      return (dropped / sampleRate) * 1000
    },
    play: (frameMs, nowMs) => {
      answerDue(nowMs, false)
      const frame = new Int16Array(frameSamples)
      let filled = 0
      // A tick running late must not play audio that arrived after its frame began.
      while (filled < frameSamples && queue.length > 0 && queue[0]!.arrivalMs <= frameMs) {
        const head = queue[0]!.pcm
        const take = Math.min(frameSamples - filled, head.length - headOffset)
        frame.set(head.subarray(headOffset, headOffset + take), filled)
        filled += take
        headOffset += take
        if (headOffset === head.length) {
          queue.shift()
          headOffset = 0
        }
      }
      playedSamples += filled
      return frame
    },
    marks: () => marks.map(({ position: _position, ...mark }) => mark)
  }
}
