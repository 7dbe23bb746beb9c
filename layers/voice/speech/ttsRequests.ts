import type { SpeechConnection } from "../../../services/ModelSettings.ts"
import type { VoiceSampleRate } from "../../../services/VoiceActivity.ts"
import { endpointUrl } from "./speechUrls.ts"

/**
 * Each HTTP provider's streaming request for raw PCM16 mono, asked for at the call's rate where
 * the provider offers it, so nothing needs resampling; OpenAI's `pcm` is fixed at 24 kHz.
 */
export interface TtsRequest {
  readonly url: URL
  readonly headers: Record<string, string>
  readonly body: string
  /** Rate of the audio the provider sends back. */
  readonly sampleRate: number
}

/** ElevenLabs' defaults: its low-latency model and a stock voice ("George"). */
const ELEVENLABS_MODEL = "eleven_flash_v2_5"
const ELEVENLABS_VOICE = "JBFqnCBsd6RMkjVDRZzb"
const CARTESIA_MODEL = "sonic-2"
const CARTESIA_VOICE = "694f9389-aac1-45b6-b726-9d9369183238"
/** The API version this request shape follows (Cartesia requires one on every call). */
const CARTESIA_VERSION = "2025-04-16"
const DEEPGRAM_VOICE = "aura-2-thalia-en"
const OPENAI_MODEL = "gpt-4o-mini-tts"
const OPENAI_VOICE = "alloy"
const OPENAI_PCM_RATE = 24000

const json = { "Content-Type": "application/json" }

/** "en-US" → "en": the providers below take ISO 639-1 codes. */
const languageCode = (
  language: string | null
) => (language === null ? undefined : language.split(/[-_]/)[0]!.toLowerCase())

export const elevenLabsRequest = (
  connection: SpeechConnection,
  apiKey: string | null,
  text: string,
  rate: VoiceSampleRate
): TtsRequest => {
  // https://elevenlabs.io/docs/api-reference/text-to-speech/stream — pcm_8000 and pcm_16000 are raw s16le.
  const voice = encodeURIComponent(connection.voice ?? ELEVENLABS_VOICE)
  const url = endpointUrl(connection.baseUrl, "https://api.elevenlabs.io", `/v1/text-to-speech/${voice}/stream`)
  url.searchParams.set("output_format", `pcm_${rate}`)
  const language = languageCode(connection.language)
  return {
    url,
    headers: { ...json, ...(apiKey === null ? {} : { "xi-api-key": apiKey }) },
    body: JSON.stringify({
      text,
      model_id: connection.model ?? ELEVENLABS_MODEL,
      ...(language ? { language_code: language } : {})
    }),
    sampleRate: rate
  }
}

export const cartesiaRequest = (
  connection: SpeechConnection,
  apiKey: string | null,
  text: string,
  rate: VoiceSampleRate
): TtsRequest => ({
  // https://docs.cartesia.ai/api-reference/tts/bytes — a raw container streams as it is generated.
  url: endpointUrl(connection.baseUrl, "https://api.cartesia.ai", "/tts/bytes"),
  headers: { ...json, ...(apiKey === null ? {} : { "X-API-Key": apiKey }), "Cartesia-Version": CARTESIA_VERSION },
  body: JSON.stringify({
    model_id: connection.model ?? CARTESIA_MODEL,
    transcript: text,
    voice: { mode: "id", id: connection.voice ?? CARTESIA_VOICE },
    output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: rate },
    language: languageCode(connection.language) ?? "en"
  }),
  sampleRate: rate
})

export const deepgramSpeakRequest = (
  connection: SpeechConnection,
  apiKey: string | null,
  text: string,
  rate: VoiceSampleRate
): TtsRequest => {
  // https://developers.deepgram.com/reference/text-to-speech/speak-request — the voice is the model;
  // without container=none the REST answer is a WAV file, header included.
  const url = endpointUrl(connection.baseUrl, "https://api.deepgram.com", "/v1/speak")
  url.searchParams.set("model", connection.voice ?? connection.model ?? DEEPGRAM_VOICE)
  url.searchParams.set("encoding", "linear16")
  url.searchParams.set("sample_rate", `${rate}`)
  url.searchParams.set("container", "none")
  return {
    url,
    headers: { ...json, ...(apiKey === null ? {} : { Authorization: `Token ${apiKey}` }) },
    body: JSON.stringify({ text }),
    sampleRate: rate
  }
}

export const openAiSpeechRequest = (connection: SpeechConnection, apiKey: string | null, text: string): TtsRequest => ({
  // https://platform.openai.com/docs/api-reference/audio/createSpeech — `pcm` is 24 kHz s16le, no header.
  url: endpointUrl(connection.baseUrl, "https://api.openai.com/v1", "/v1/audio/speech"),
  headers: { ...json, ...(apiKey === null ? {} : { Authorization: `Bearer ${apiKey}` }) },
  body: JSON.stringify({
    model: connection.model ?? OPENAI_MODEL,
    input: text,
    voice: connection.voice ?? OPENAI_VOICE,
    response_format: "pcm"
  }),
  sampleRate: OPENAI_PCM_RATE
})
