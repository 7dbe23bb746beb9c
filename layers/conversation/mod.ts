import { Layer } from "effect"
import { AgentTestRunsLive, AgentTestsLive } from "../agentTests/mod.ts"
import { LlmChatLive } from "../llm/openaiChat.ts"
import { ChatSessionsLive } from "./chatSessions.ts"
import { ConversationEngineLive } from "./conversationEngine.ts"
import { ConversationsLive } from "./conversations.ts"
import { ConversationStartsLive } from "./conversationStarts.ts"

/**
 * The conversation engine with its text chat channel, the v2 conversation reads and agent tests
 * (simulated callers over the chat channel). Needs WorkflowRepo, ModelSettings and LlmGenerator
 * (the agents area), the recordings catalog and the SQL client below it.
 */
export const ConversationAreaLive = Layer.mergeAll(AgentTestsLive, AgentTestRunsLive).pipe(
  Layer.provideMerge(Layer.mergeAll(ChatSessionsLive, ConversationsLive)),
  Layer.provide(Layer.merge(ConversationEngineLive, ConversationStartsLive)),
  Layer.provide(LlmChatLive)
)
