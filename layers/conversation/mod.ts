import { Layer } from "effect"
import { LlmChatLive } from "../llm/openaiChat.ts"
import { ChatSessionsLive } from "./chatSessions.ts"
import { ConversationEngineLive } from "./conversationEngine.ts"
import { ConversationsLive } from "./conversations.ts"

/**
 * The conversation engine with its text chat channel and the v2 conversation reads. Needs
 * ModelSettings and LlmGenerator (the agents area) and the SQL client below it.
 */
export const ConversationAreaLive = Layer.mergeAll(ChatSessionsLive, ConversationsLive).pipe(
  Layer.provide(ConversationEngineLive),
  Layer.provide(LlmChatLive)
)
