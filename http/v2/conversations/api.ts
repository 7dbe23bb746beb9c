import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { JsonObject, Timestamp } from "../../../src/domain/wireTypes.ts"
import { QualityReviewView } from "../../../src/quality/reviewView.ts"
import { HttpForbidden, HttpNotFound } from "../../errors.ts"
import { IdFromPath, pathSchema } from "../../requestSchemas.ts"
import { V2Auth } from "../../security.ts"
import { Collection, PageQuery, Resource } from "../envelopes.ts"

export const V2ConversationUsage = Schema.Struct({
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  service_tokens: Schema.Int.annotations({
    description: "All LLM tokens the run consumed (prompt + completion, every call)"
  }),
  tts_characters: Schema.Int,
  stt_seconds: Schema.Number
}).annotations({ identifier: "V2_ConversationUsage" })

/** One call or chat of an agent: a run, with its transcript and results. */
export const V2Conversation = Schema.Struct({
  id: Schema.Int,
  agent_id: Schema.Int,
  agent_version: Schema.NullOr(Schema.Int),
  channel: Schema.Literal("telephony", "web", "chat"),
  mode: Schema.String,
  direction: Schema.Literal("inbound", "outbound"),
  status: Schema.Literal("initialized", "running", "completed", "failed"),
  caller_number: Schema.NullOr(Schema.String),
  called_number: Schema.NullOr(Schema.String),
  campaign_id: Schema.NullOr(Schema.Int),
  started_at: Schema.NullOr(Timestamp),
  ended_at: Schema.NullOr(Timestamp),
  duration_seconds: Schema.Int,
  disposition: Schema.NullOr(Schema.String),
  end_reason: Schema.NullOr(Schema.String),
  initial_context: JsonObject,
  gathered_context: JsonObject,
  transcript: Schema.Array(JsonObject).annotations({
    description:
      "Turns in order: {role: user|assistant, text, node_id, at}; voice turns add start_ms/end_ms (since the call's audio began), latency_ms on agent turns, interrupted when the caller spoke over the agent"
  }),
  latency: Schema.Struct({
    p50_ms: Schema.NullOr(Schema.Int),
    p90_ms: Schema.NullOr(Schema.Int)
  }).annotations({
    description: "Voice calls: from the caller's last word to the agent's first audio, over the call's turns"
  }),
  usage: V2ConversationUsage,
  quality_review: Schema.NullOr(QualityReviewView).annotations({
    description:
      "The run's quality review (the agent's quality_review setting); null when the agent does not review runs"
  }),
  created_at: Timestamp
}).annotations({ identifier: "V2_Conversation" })

const AgentPath = pathSchema("AgentConversations", { agent_id: IdFromPath })
const ConversationPath = pathSchema("Conversation", { conversation_id: IdFromPath })

/** Conversations of agents; needs the `conversations:read` scope. */
export const ConversationsApi = HttpApiGroup.make("conversations")
  .annotate(
    OpenApi.Description,
    "Calls and chats of agents as conversations. Needs an API key with `conversations:read`."
  )
  .add(
    HttpApiEndpoint.get("listForAgent", "/api/v2/agents/:agent_id/conversations")
      .annotate(OpenApi.Summary, "List an agent's conversations")
      .annotate(
        OpenApi.Description,
        "The agent's calls and chats, newest first, paginated with `page` and `page_size`."
      )
      .setPath(AgentPath)
      .setUrlParams(PageQuery)
      .addSuccess(Collection(V2Conversation))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v2/conversations/:conversation_id")
      .annotate(OpenApi.Summary, "Get a conversation")
      .annotate(OpenApi.Description, "One call or chat with its transcript, contexts, disposition, latency and usage.")
      .setPath(ConversationPath)
      .addSuccess(Resource(V2Conversation))
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .middleware(V2Auth)
