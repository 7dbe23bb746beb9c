import { Layer } from "effect"
import { ConversationEngineLive } from "../conversation/conversationEngine.ts"
import { ConversationStartsLive } from "../conversation/conversationStarts.ts"
import { LlmChatLive } from "../llm/openaiChat.ts"
import { SpeechLive } from "./speech/mod.ts"
import { VoiceCallsLive } from "./voiceCalls.ts"

/**
 * Voice calls with the speech services and the conversation engine they run. Needs the database,
 * secrets, the agents area (WorkflowRepo, model settings, LLM generator), carriers and their
 * configurations, storage and the recordings library from below. The conversation engine and
 * conversation starts are the same layers the chat area uses, so one application builds each once.
 */
export const VoiceAreaLive = VoiceCallsLive.pipe(
  Layer.provide(
    Layer.mergeAll(ConversationEngineLive.pipe(Layer.provide(LlmChatLive)), ConversationStartsLive, SpeechLive)
  )
)
