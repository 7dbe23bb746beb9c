import { Layer } from "effect"
import { SpeechToTextLive } from "./speechToText.ts"
import { TextToSpeechLive } from "./textToSpeech.ts"
import { TurnModelLive } from "./turnModel.ts"
import { VoiceActivityLive } from "./voiceActivity.ts"

export { SPEECH_TO_TEXT_PROVIDERS, SpeechToTextLive } from "./speechToText.ts"
export { TEXT_TO_SPEECH_PROVIDERS, TextToSpeechLive } from "./textToSpeech.ts"
export { TurnModelLive, turnModelPath } from "./turnModel.ts"
export { DEFAULT_SEGMENTATION, vadWorkers, VoiceActivityLive } from "./voiceActivity.ts"

/** The speech services of the voice pipeline: Silero VAD, streaming STT, streaming TTS, the optional end-of-turn model. */
export const SpeechLive = Layer.mergeAll(VoiceActivityLive, SpeechToTextLive, TextToSpeechLive, TurnModelLive)
