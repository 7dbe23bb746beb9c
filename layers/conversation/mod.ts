import { Layer } from "effect"
import { LlmChatLive } from "../llm/openaiChat.ts"
import { ChatSessionsLive } from "./chatSessions.ts"
import { ConversationEngineLive } from "./conversationEngine.ts"
import { ConversationsLive } from "./conversations.ts"
import { ConversationStartsLive } from "./conversationStarts.ts"

/**
 * The conversation engine with its text chat channel and the v2 conversation reads. Needs
 * WorkflowRepo, ModelSettings and LlmGenerator (the agents area), the recordings catalog and the
 * SQL client below it.
 */
export const ConversationAreaLive = Layer.mergeAll(ChatSessionsLive, ConversationsLive).pipe(
  Layer.provide(Layer.merge(ConversationEngineLive, ConversationStartsLive)),
  Layer.provide(LlmChatLive)
)
