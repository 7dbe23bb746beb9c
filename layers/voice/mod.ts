import { Layer } from "effect"
import { ConversationEngineLive } from "../conversation/conversationEngine.ts"
import { LlmChatLive } from "../llm/openaiChat.ts"
import { SpeechLive } from "./speech/mod.ts"
import { VoiceCallsLive } from "./voiceCalls.ts"

/**
 * Voice calls with the speech services and the conversation engine they run. Needs the database,
 * secrets, model settings and LLM generator, carriers and their configurations, storage and the
 * recordings library from below.
 */
export const VoiceAreaLive = VoiceCallsLive.pipe(
  Layer.provide(Layer.merge(ConversationEngineLive.pipe(Layer.provide(LlmChatLive)), SpeechLive))
)
