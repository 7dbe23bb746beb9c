import type { ExtractionVariable } from "../../../src/graph/definition.ts"
import type { EdgeFields, GraphEdge, GraphNode, NodeFields } from "./graphConversion.ts"
import { nodeTypeLabels } from "./GraphNodeCard.tsx"

type Variable = ExtractionVariable

const Problems = ({ problems }: { readonly problems: ReadonlyArray<string> | undefined }) =>
  problems && problems.length > 0
    ? (
      <ul className="problem" role="alert" aria-label="Problems">
        {problems.map((problem) => <li key={problem}>{problem}</li>)}
      </ul>
    )
    : null

const Check = (
  { label, checked, onChange }: {
    readonly label: string
    readonly checked: boolean
    readonly onChange: (v: boolean) => void
  }
) => (
  <label className="inline">
    <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
    {label}
  </label>
)

const VariablesEditor = (
  { variables, onChange }: {
    readonly variables: ReadonlyArray<Variable>
    readonly onChange: (v: Array<Variable>) => void
  }
) => {
  const replace = (index: number, next: Variable) => onChange(variables.map((v, i) => (i === index ? next : v)))
  return (
    <fieldset>
      <legend>Extraction variables</legend>
      {variables.length === 0 && <p className="hint">None: add the facts this step should collect.</p>}
      {variables.map((variable, index) => (
        <div className="variable-row" key={index}>
          <label>
            Name
            <input value={variable.name} onChange={(e) => replace(index, { ...variable, name: e.target.value })} />
          </label>
          <label>
            Type
            <select
              value={variable.type}
              onChange={(e) => replace(index, { ...variable, type: e.target.value as Variable["type"] })}
            >
              <option value="string">text</option>
              <option value="number">number</option>
              <option value="boolean">yes/no</option>
            </select>
          </label>
          <label>
            What to extract
            <input
              value={variable.prompt ?? ""}
              onChange={(e) => replace(index, { ...variable, prompt: e.target.value })}
            />
          </label>
          <button
            type="button"
            className="secondary"
            onClick={() => onChange(variables.filter((_, i) => i !== index))}
          >
            Remove <span className="visually-hidden">variable {variable.name}</span>
          </button>
        </div>
      ))}
      <button
        type="button"
        className="secondary"
        onClick={() =>
          onChange([...variables, { name: `variable_${variables.length + 1}`, type: "string", prompt: "" }])}
      >
        Add variable
      </button>
    </fieldset>
  )
}

/** The selected node's fields, as the definition stores them. */
export const NodePanel = (
  { node, onChange, onDelete }: {
    readonly node: GraphNode
    readonly onChange: (fields: NodeFields) => void
    readonly onDelete: () => void
  }
) => {
  const fields = node.data.fields
  const set = (patch: NodeFields) => onChange({ ...fields, ...patch })
  const conversational = node.type !== "globalNode"
  return (
    <section className="side-panel" aria-labelledby="panel-title">
      <h2 id="panel-title">{nodeTypeLabels[node.type]} node</h2>
      <Problems problems={node.data.problems} />
      <label>
        Name
        <input value={fields.name ?? ""} onChange={(e) => set({ name: e.target.value })} />
      </label>
      <label>
        Prompt
        <textarea rows={8} value={fields.prompt ?? ""} onChange={(e) => set({ prompt: e.target.value })} />
      </label>
      {node.type === "startCall" && (
        <>
          <label>
            Greeting
            <textarea rows={2} value={fields.greeting ?? ""} onChange={(e) => set({ greeting: e.target.value })} />
          </label>
          <label>
            Greeting is
            <select
              value={fields.greeting_type ?? "text"}
              onChange={(e) => set({ greeting_type: e.target.value as "text" | "audio" })}
            >
              <option value="text">text, spoken by the voice</option>
              <option value="audio">a recording</option>
            </select>
          </label>
          {fields.greeting_type === "audio" && (
            <label>
              Recording id
              <input
                value={fields.greeting_recording_id ?? ""}
                onChange={(e) => set({ greeting_recording_id: e.target.value })}
              />
            </label>
          )}
        </>
      )}
      {conversational && (
        <>
          <Check
            label="Caller may interrupt"
            checked={fields.allow_interrupt ?? false}
            onChange={(v) => set({ allow_interrupt: v })}
          />
          <Check
            label="Add the global prompt"
            checked={fields.add_global_prompt ?? false}
            onChange={(v) => set({ add_global_prompt: v })}
          />
          <Check
            label="Extract variables"
            checked={fields.extraction_enabled ?? false}
            onChange={(v) => set({ extraction_enabled: v })}
          />
          {fields.extraction_enabled && (
            <>
              <label>
                Extraction instructions
                <textarea
                  rows={2}
                  value={fields.extraction_prompt ?? ""}
                  onChange={(e) => set({ extraction_prompt: e.target.value })}
                />
              </label>
              <VariablesEditor
                variables={fields.extraction_variables ?? []}
                onChange={(v) => set({ extraction_variables: v })}
              />
            </>
          )}
        </>
      )}
      <button type="button" className="danger" onClick={onDelete}>Delete node</button>
    </section>
  )
}

/** The selected edge: its label, the condition for taking it, and what is said on the way. */
export const EdgePanel = (
  { edge, onChange, onDelete }: {
    readonly edge: GraphEdge
    readonly onChange: (fields: EdgeFields) => void
    readonly onDelete: () => void
  }
) => {
  const fields = edge.data?.fields ?? {}
  const set = (patch: EdgeFields) => onChange({ ...fields, ...patch })
  return (
    <section className="side-panel" aria-labelledby="panel-title">
      <h2 id="panel-title">Transition</h2>
      <Problems problems={edge.data?.problems} />
      <label>
        Label
        <input value={fields.label ?? ""} onChange={(e) => set({ label: e.target.value })} />
      </label>
      <label>
        Condition
        <textarea rows={4} value={fields.condition ?? ""} onChange={(e) => set({ condition: e.target.value })} />
      </label>
      <label>
        Said while moving on (optional)
        <input value={fields.transition_speech ?? ""} onChange={(e) => set({ transition_speech: e.target.value })} />
      </label>
      <button type="button" className="danger" onClick={onDelete}>Delete transition</button>
    </section>
  )
}
