/**
 * A Dograh `qa` node becomes the agent's `quality_review` setting when the agent is saved: the node
 * stays in the definition (an export gives it back), the setting is what runs. Dograh may carry
 * its own model key on the node; talkgraph reviews with the organization's LLM connection and
 * never stores a key inside a definition, so a node carrying one is refused.
 */

const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {}

export interface QaNodeProblem {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
  readonly type: string
}

export type QaNodeSetting =
  | { readonly _tag: "None" }
  | { readonly _tag: "Setting"; readonly setting: Record<string, unknown> }
  | { readonly _tag: "Refused"; readonly problems: ReadonlyArray<QaNodeProblem> }

const text = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value : null)

/** The `quality_review` setting a raw definition's qa node asks for, or why it cannot be used. */
export const qaNodeSetting = (definition: unknown): QaNodeSetting => {
  const nodes = Array.isArray(record(definition)["nodes"]) ? record(definition)["nodes"] as Array<unknown> : []
  const found = nodes.flatMap((node, index) => (record(node)["type"] === "qa" ? [{ index, node: record(node) }] : []))
  if (found.length === 0) return { _tag: "None" }
  if (found.length > 1) {
    return {
      _tag: "Refused",
      problems: [{
        path: ["nodes", found[1]!.index],
        message: "an agent has at most one qa node",
        type: "qa_node_duplicate"
      }]
    }
  }
  const { index, node } = found[0]!
  const data = record(node["data"])
  if (text(data["qa_api_key"]) !== null) {
    return {
      _tag: "Refused",
      problems: [{
        path: ["nodes", index, "data", "qa_api_key"],
        message:
          "talkgraph does not keep model keys in an agent: remove qa_api_key and review with the organization's LLM connection (qa_use_workflow_llm, or qa_model for another of its models)",
        type: "qa_api_key_refused"
      }]
    }
  }
  const prompt = text(data["qa_system_prompt"])
  const ownModel = data["qa_use_workflow_llm"] === false ? text(data["qa_model"]) : null
  return {
    _tag: "Setting",
    setting: {
      enabled: data["qa_enabled"] !== false,
      rubric: prompt === null ? "default" : { prompt },
      min_duration_seconds: typeof data["qa_min_call_duration"] === "number" ? data["qa_min_call_duration"] : 15,
      sample_rate: typeof data["qa_sample_rate"] === "number" ? data["qa_sample_rate"] : 100,
      include_voicemail: data["qa_voicemail_calls"] === true,
      model: ownModel
    }
  }
}

/** The configurations to store: a qa node's setting unless the request sets `quality_review` itself. */
export const withQaNodeSetting = (
  configurations: Readonly<Record<string, unknown>>,
  qa: QaNodeSetting
): Readonly<Record<string, unknown>> =>
  qa._tag === "Setting" && configurations["quality_review"] === undefined
    ? { ...configurations, quality_review: qa.setting }
    : configurations
