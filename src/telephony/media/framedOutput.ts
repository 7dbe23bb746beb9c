import { packetFramer } from "./mediaFrames.ts"
import type { MediaProtocol, OutboundMedia } from "./mediaProtocol.ts"

/** How a provider frames what the session sends it. */
export interface OutputFraming {
  readonly packetSamples: number
  readonly packet: (pcm: Int16Array) => OutboundMedia
  readonly mark: (name: string) => OutboundMedia
  readonly clear: () => OutboundMedia
  /** Whether anything may go out yet: protocols whose messages name the stream wait for its id. */
  readonly ready?: () => boolean
}

/**
 * The session's output, the same for every provider: audio cut into the provider's packets, a
 * mark sent after the audio queued before it, and a clear that also drops what was not sent yet.
 */
export const framedOutput = (framing: OutputFraming): Pick<MediaProtocol, "audio" | "mark" | "clear"> => {
  const framer = packetFramer(framing.packetSamples)
  const ready = framing.ready ?? (() => true)
  return {
    audio: (pcm) => (ready() ? framer.push(pcm).map(framing.packet) : []),
    mark: (name) => (ready() ? [...framer.flush().map(framing.packet), framing.mark(name)] : []),
    clear: () => {
      framer.drop()
      return ready() ? [framing.clear()] : []
    }
  }
}
