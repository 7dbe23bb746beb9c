import { encodeMuLaw, MU_LAW_DECODE } from "../../audio/g711.ts"

/** Shared pieces of the providers' media framings: tolerant JSON, G.711 and L16 payloads, 20 ms packets. */

export type JsonObject = Readonly<Record<string, unknown>>

const utf8 = new TextDecoder("utf-8", { fatal: false })

/** The message as a JSON object, or null for anything else (garbage is ignored, never thrown). */
export const jsonObject = (message: string | Uint8Array): JsonObject | null => {
  try {
    const value: unknown = JSON.parse(typeof message === "string" ? message : utf8.decode(message))
    return isObject(value) ? value : null
  } catch {
    return null
  }
}

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const objectField = (value: JsonObject | null | undefined, key: string): JsonObject | null => {
  const field = value?.[key]
  return isObject(field) ? field : null
}

export const stringField = (value: JsonObject | null | undefined, key: string): string | null => {
  const field = value?.[key]
  return typeof field === "string" ? field : null
}

/** The string-valued entries of an object (providers pass custom parameters as strings). */
export const stringEntries = (value: JsonObject | null, skip: ReadonlyArray<string> = []): Record<string, string> => {
  const entries: Record<string, string> = {}
  if (value === null) return entries
  for (const [key, field] of Object.entries(value)) {
    if (typeof field === "string" && !skip.includes(key)) entries[key] = field
  }
  return entries
}

const toBase64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/** PCM16 as base64 μ-law, the payload of Twilio, Telnyx (PCMU) and Plivo media messages. */
export const muLawBase64 = (pcm: Int16Array): string => toBase64(encodeMuLaw(pcm))

/** A base64 μ-law payload as PCM16; empty when there is nothing decodable. */
export const pcmFromMuLawBase64 = (payload: string): Int16Array => {
  const bytes = Buffer.from(payload, "base64")
  const pcm = new Int16Array(bytes.length)
  for (let i = 0; i < bytes.length; i++) pcm[i] = MU_LAW_DECODE[bytes[i]!]!
  return pcm
}

/** Little-endian 16-bit bytes as PCM16 (a trailing odd byte is dropped). */
export const pcmFromLinear16 = (bytes: Uint8Array): Int16Array => {
  const pcm = new Int16Array(bytes.length >> 1)
  for (let i = 0; i < pcm.length; i++) pcm[i] = ((bytes[2 * i]! | (bytes[2 * i + 1]! << 8)) << 16) >> 16
  return pcm
}

export const linear16FromPcm = (pcm: Int16Array): Uint8Array => {
  const bytes = new Uint8Array(pcm.length * 2)
  for (let i = 0; i < pcm.length; i++) {
    bytes[2 * i] = pcm[i]! & 0xff
    bytes[2 * i + 1] = (pcm[i]! >> 8) & 0xff
  }
  return bytes
}

interface PacketFramer {
  /** Whole packets of the audio so far; a shorter tail waits for the next call. */
  readonly push: (pcm: Int16Array) => ReadonlyArray<Int16Array>
  /** The waiting tail padded with silence to a whole packet, so a mark follows every sample before it. */
  readonly flush: () => ReadonlyArray<Int16Array>
  /** Forgets the waiting tail (the provider's queue is being cleared). */
  readonly drop: () => void
}

/**
 * Cuts agent audio into packets of `packetSamples` (20 ms). Providers play whole packets; Vonage
 * in particular expects every binary message to be exactly one 20 ms packet.
 */
export const packetFramer = (packetSamples: number): PacketFramer => {
  let tail = new Int16Array(0)
  return {
    push: (pcm) => {
      const joined = new Int16Array(tail.length + pcm.length)
      joined.set(tail)
      joined.set(pcm, tail.length)
      const packets: Array<Int16Array> = []
      let offset = 0
      for (; offset + packetSamples <= joined.length; offset += packetSamples) {
        packets.push(joined.slice(offset, offset + packetSamples))
      }
      tail = joined.slice(offset)
      return packets
    },
    flush: () => {
      if (tail.length === 0) return []
      const packet = new Int16Array(packetSamples)
      packet.set(tail)
      tail = new Int16Array(0)
      return [packet]
    },
    drop: () => {
      tail = new Int16Array(0)
    }
  }
}
