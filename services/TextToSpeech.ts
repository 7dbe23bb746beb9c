import { Context, type Stream } from "effect"
import type { SpeechConnection } from "./ModelSettings.ts"
import type { SpeechFailed } from "./SpeechToText.ts"
import type { VoiceSampleRate } from "./VoiceActivity.ts"

export interface TextToSpeechShape {
  /**
   * Speaks `text` with the organization's TTS provider (elevenlabs, cartesia, deepgram, openai, or
   * `local` for development): mono PCM16 at `sampleRate`, in chunks as the provider streams them.
   * Interrupting the stream cancels the request at the provider.
   */
  readonly synthesize: (
    connection: SpeechConnection,
    text: string,
    sampleRate: VoiceSampleRate
  ) => Stream.Stream<Int16Array, SpeechFailed>
}

export class TextToSpeech extends Context.Tag("talkgraph/TextToSpeech")<TextToSpeech, TextToSpeechShape>() {}
