import { Schema } from "effect"

/**
 * The ReactFlow-shaped `workflow_definition` (docs/architecture.md, "Agents"). Each part is decoded on its
 * own so validation can report every problem at once; unknown keys are kept, because editors store
 * their own layout state next to ours.
 */
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const oneOf = <const Values extends ReadonlyArray<string>>(...values: Values) =>
  Schema.Literal(...values).annotations({ message: () => `must be one of ${values.join(", ")}` })

const NonBlank = Schema.String.pipe(
  Schema.filter((text) => text.trim().length > 0, { message: () => "must not be empty" })
)

export const NodeTypes = ["startCall", "agentNode", "endCall", "globalNode", "webhook", "trigger", "qa"] as const
export type NodeType = (typeof NodeTypes)[number]

export const ExtractionVariable = Schema.Struct({
  name: Schema.String.pipe(
    Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, {
      message: () => "must start with a letter or _ and hold only letters, digits and _ (at most 64)"
    })
  ),
  type: oneOf("string", "number", "boolean"),
  prompt: optional(Schema.String)
})
export type ExtractionVariable = typeof ExtractionVariable.Type

const extractionFields = {
  extraction_enabled: optional(Schema.Boolean),
  extraction_prompt: optional(Schema.String),
  extraction_variables: optional(Schema.Array(ExtractionVariable))
}

/**
 * A node's own turn-taking: how long the caller's silence must last before the agent answers
 * while the conversation is at this node (a node asking for an address may wait longer).
 */
export const NodeTurnTaking = Schema.Struct({
  endpointing_ms: optional(
    Schema.Int.pipe(
      Schema.between(300, 1500, { message: () => "must be a whole number of milliseconds from 300 to 1500" })
    )
  )
})

/**
 * A collect-digits step: at this node the caller's keys are gathered into one entry of
 * `max_digits` keys, or up to the `terminator`, or until they pause `timeout_ms`; the entry is the
 * caller's turn, and with `variable` it is also stored as that variable (a string: "0042" keeps its zeros).
 */
export const CollectDigits = Schema.Struct({
  max_digits: optional(
    Schema.Int.pipe(Schema.between(1, 32, { message: () => "must be a whole number from 1 to 32" }))
  ),
  terminator: optional(Schema.NullOr(oneOf("#", "*"))),
  timeout_ms: optional(
    Schema.Int.pipe(
      Schema.between(500, 30_000, { message: () => "must be a whole number of milliseconds from 500 to 30000" })
    )
  ),
  variable: optional(ExtractionVariable.fields.name)
})
export type CollectDigits = typeof CollectDigits.Type

/** Tools of the organization's library the model may call at this node, by `tool_uuid` (Dograh's `tool_uuids`). */
const toolFields = {
  tool_uuids: optional(Schema.Array(Schema.String.pipe(Schema.maxLength(100))).pipe(Schema.maxItems(50))),
  /**
   * For an MCP server among `tool_uuids` (by its `tool_uuid`): the server's tools offered at this
   * node, by their names in its catalog. A server not named here offers every tool its filter allows.
   */
  mcp_tools: optional(
    Schema.Record({
      key: Schema.String.pipe(Schema.maxLength(100)),
      value: Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))).pipe(Schema.maxItems(200))
    })
  ),
  /** Knowledge-base documents the model may search at this node (Dograh's `document_uuids`). */
  document_uuids: optional(
    Schema.Array(
      Schema.String.pipe(
        Schema.pattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, {
          message: () => "must be a document_uuid"
        })
      )
    ).pipe(Schema.maxItems(100))
  ),
  /**
   * How the model gets the documents at this node: `tool` (the default) offers `search_knowledge_base`
   * for the model to call; `auto` searches them with each caller message before the model answers
   * and gives it the passages found. On the global node: the default of the nodes taking the global prompt.
   */
  knowledge_retrieval: optional(oneOf("tool", "auto"))
}

const conversationFields = {
  name: NonBlank,
  prompt: NonBlank,
  allow_interrupt: optional(Schema.Boolean),
  add_global_prompt: optional(Schema.Boolean),
  turn_taking: optional(NodeTurnTaking),
  collect_digits: optional(CollectDigits),
  /** The model that answers at this node (and extracts its variables), in place of the agent's or organization's. */
  llm_model: optional(Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(200))),
  /** The sampling temperature at this node, in place of the agent's or organization's. */
  llm_temperature: optional(Schema.Number.pipe(Schema.between(0, 2, { message: () => "must be from 0 to 2" })))
}

export const StartCallData = Schema.Struct({
  ...conversationFields,
  greeting_type: optional(oneOf("text", "audio")),
  greeting: optional(Schema.String),
  greeting_recording_id: optional(Schema.String),
  ...extractionFields,
  ...toolFields
})
export const AgentNodeData = Schema.Struct({ ...conversationFields, ...extractionFields, ...toolFields })
export const EndCallData = Schema.Struct({ ...conversationFields, ...extractionFields })
/** The global node's tools are offered at every node that takes the global prompt. */
export const GlobalNodeData = Schema.Struct({ name: NonBlank, prompt: NonBlank, ...toolFields })

/** Dograh's webhook methods (api/services/workflow/dto.py, WebhookNodeData). */
export const WEBHOOK_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const

const HttpUrl = Schema.String.pipe(
  Schema.maxLength(2000),
  Schema.filter((text) => {
    try {
      const url = new URL(text)
      return url.protocol === "http:" || url.protocol === "https:"
    } catch {
      return false
    }
  }, { message: () => "must be an http or https URL" })
)

/**
 * Sent after a finished run of the agent (Dograh's webhook node): the payload's string values are
 * templates over the run's data. Not a conversation node, so no edges touch it.
 */
export const WebhookNodeData = Schema.Struct({
  name: NonBlank,
  enabled: optional(Schema.Boolean),
  http_method: optional(Schema.NullOr(oneOf(...WEBHOOK_METHODS))),
  endpoint_url: HttpUrl,
  credential_uuid: optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(100)))),
  custom_headers: optional(
    Schema.NullOr(
      Schema.Array(
        Schema.Struct({
          key: Schema.String.pipe(
            Schema.pattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/, { message: () => "must be an HTTP header name" })
          ),
          value: Schema.String.pipe(Schema.maxLength(4000))
        })
      ).pipe(Schema.maxItems(50))
    )
  ),
  payload_template: optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown })))
})
export type WebhookNodeData = typeof WebhookNodeData.Type

/**
 * Dograh's trigger node: `POST /api/v1/public/agent/<trigger_path>` places a call with the agent holding it.
 * The path is a segment of at most 36 letters, digits, hyphens or underscores (Dograh's rule).
 */
export const TRIGGER_PATH = /^[A-Za-z0-9_-]{1,36}$/
export const TriggerNodeData = Schema.Struct({
  name: NonBlank,
  enabled: optional(Schema.Boolean),
  trigger_path: Schema.String.pipe(
    Schema.pattern(TRIGGER_PATH, {
      message: () => "must be 1 to 36 letters, digits, hyphens or underscores"
    })
  )
})
export type TriggerNodeData = typeof TriggerNodeData.Type

/**
 * Dograh's QA node: a review of each finished conversation. Saving an agent that holds one makes it
 * the agent's `quality_review` setting (src/quality/qaNode.ts), which is what runs.
 */
export const QaNodeData = Schema.Struct({
  name: NonBlank,
  qa_enabled: optional(Schema.Boolean),
  qa_use_workflow_llm: optional(Schema.Boolean),
  qa_provider: optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(100)))),
  qa_model: optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(200)))),
  qa_api_key: optional(Schema.NullOr(Schema.String)),
  qa_endpoint: optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(2000)))),
  qa_system_prompt: optional(Schema.NullOr(Schema.String)),
  qa_min_call_duration: optional(Schema.Number.pipe(Schema.nonNegative({ message: () => "must be 0 or more" }))),
  qa_voicemail_calls: optional(Schema.Boolean),
  qa_sample_rate: optional(Schema.Number.pipe(Schema.between(0, 100, { message: () => "must be from 0 to 100" })))
})
export type QaNodeData = typeof QaNodeData.Type

/** Node types that take no part in the conversation: no edges, the engine skips them. */
export const SIDE_NODE_TYPES: ReadonlyArray<NodeType> = ["webhook", "trigger", "qa"]

export const nodeDataSchemas = {
  startCall: StartCallData,
  agentNode: AgentNodeData,
  endCall: EndCallData,
  globalNode: GlobalNodeData,
  webhook: WebhookNodeData,
  trigger: TriggerNodeData,
  qa: QaNodeData
} satisfies Record<NodeType, Schema.Schema.AnyNoContext>

export type StartCallData = typeof StartCallData.Type
type AgentNodeData = typeof AgentNodeData.Type
type EndCallData = typeof EndCallData.Type
type GlobalNodeData = typeof GlobalNodeData.Type

const Id = Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" }), Schema.maxLength(200))

export const NodeEnvelope = Schema.Struct({
  id: Id,
  type: oneOf(...NodeTypes),
  position: optional(Schema.Struct({ x: Schema.Number, y: Schema.Number })),
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

export const EdgeEnvelope = Schema.Struct({
  id: Id,
  source: Id,
  target: Id,
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

export const EdgeData = Schema.Struct({
  label: NonBlank,
  condition: NonBlank,
  transition_speech: optional(Schema.String),
  transition_speech_type: optional(oneOf("text", "audio")),
  transition_speech_recording_id: optional(Schema.String)
})
export type EdgeData = typeof EdgeData.Type

/** Bounds keep validation (and every later turn over the graph) cheap; real agents are far smaller. */
export const MAX_NODES = 500
export const MAX_EDGES = 2000

export const DefinitionEnvelope = Schema.Struct({
  nodes: Schema.Array(Schema.Unknown).pipe(Schema.maxItems(MAX_NODES)),
  edges: Schema.Array(Schema.Unknown).pipe(Schema.maxItems(MAX_EDGES))
})

/** A definition that passed validation, typed for the code that runs it. */
export type WorkflowNode =
  | { readonly id: string; readonly type: "startCall"; readonly data: StartCallData }
  | { readonly id: string; readonly type: "agentNode"; readonly data: AgentNodeData }
  | { readonly id: string; readonly type: "endCall"; readonly data: EndCallData }
  | { readonly id: string; readonly type: "globalNode"; readonly data: GlobalNodeData }

export interface WorkflowEdge {
  readonly id: string
  readonly source: string
  readonly target: string
  readonly data: EdgeData
}

/** A node outside the conversation: a webhook sent after runs, or a trigger placing calls. */
export type SideNode =
  | { readonly id: string; readonly type: "webhook"; readonly data: WebhookNodeData }
  | { readonly id: string; readonly type: "trigger"; readonly data: TriggerNodeData }
  | { readonly id: string; readonly type: "qa"; readonly data: QaNodeData }

export interface WorkflowGraph {
  /** The conversation's nodes, the only ones the engine walks. */
  readonly nodes: ReadonlyArray<WorkflowNode>
  readonly edges: ReadonlyArray<WorkflowEdge>
  readonly sideNodes: ReadonlyArray<SideNode>
}
