import { type FormEvent, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { messageOf, ok } from "../api/problems.ts"
import { useLoad } from "../useLoad.ts"
import { Field, Problem } from "./Field.tsx"
import { SettingsTable } from "./SettingsTable.tsx"
import { useAction } from "./useAction.ts"

type Configuration = Schemas["TelephonyConfigurationListItem"]
type Agent = { readonly id: number; readonly name: string }

const NUMBERS = "/api/v1/organizations/telephony-configs/{config_id}/phone-numbers"
const NUMBER = "/api/v1/organizations/telephony-configs/{config_id}/phone-numbers/{number_id}"

const AgentSelect = (
  { agents, value, onChange, label, disabled }: {
    readonly agents: ReadonlyArray<Agent>
    readonly value: number | null
    readonly onChange: (id: number | null) => void
    readonly label: string
    readonly disabled?: boolean
  }
) => (
  <select
    aria-label={label}
    value={value ?? ""}
    disabled={disabled}
    onChange={(e) => onChange(e.target.value === "" ? null : Number(e.target.value))}
  >
    <option value="">No agent (inbound calls refused)</option>
    {agents.map((agent) => <option key={agent.id} value={agent.id}>{agent.name}</option>)}
  </select>
)

/** A configuration's numbers: add, remove, and pick the agent that answers each one's inbound calls. */
export const PhoneNumbers = (
  { configuration, canChange, onChanged }: {
    readonly configuration: Configuration
    readonly canChange: boolean
    readonly onChanged: () => void
  }
) => {
  const path = { config_id: configuration.id }
  const [numbers, reload] = useLoad(() => ok(api.GET(NUMBERS, { params: { path } })), [configuration.id])
  const [agents] = useLoad(() => ok(api.GET("/api/v1/workflow/fetch", { params: { query: { status: "active" } } })), [])
  const [address, setAddress] = useState("")
  const [label, setLabel] = useState("")
  const [agent, setAgent] = useState<number | null>(null)
  const [adding, runAdd] = useAction()
  const [problem, setProblem] = useState<string>()
  const [saved, setSaved] = useState<string>()
  const agentList: ReadonlyArray<Agent> = agents.state === "ready" ? agents.value : []

  const changed = () => {
    reload()
    onChanged()
  }

  const add = async (event: FormEvent) => {
    event.preventDefault()
    const created = await runAdd(() =>
      ok(api.POST(NUMBERS, {
        params: { path },
        body: { address: address.trim(), label: label.trim() || null, inbound_workflow_id: agent }
      }))
    )
    if (created) {
      setAddress("")
      setLabel("")
      setAgent(null)
      changed()
    }
  }

  const update = async (number: Schemas["PhoneNumberResponse"], body: { inbound_workflow_id?: number | null }) => {
    setProblem(undefined)
    setSaved(undefined)
    try {
      await ok(api.PUT(NUMBER, { params: { path: { ...path, number_id: number.id } }, body }))
      const routed = agentList.find((candidate) => candidate.id === body.inbound_workflow_id)
      setSaved(routed ? `${number.address} is answered by ${routed.name}.` : `${number.address} has no agent now.`)
      reload()
    } catch (error) {
      setProblem(messageOf(error))
    }
  }

  /** Editing a number the carrier refused as a caller ID puts it back into caller-ID pools. */
  const restoreCallerId = async (number: Schemas["PhoneNumberResponse"]) => {
    setProblem(undefined)
    setSaved(undefined)
    try {
      await ok(api.PUT(NUMBER, { params: { path: { ...path, number_id: number.id } }, body: { label: number.label } }))
      setSaved(`${number.address} is back in caller-ID pools.`)
      reload()
    } catch (error) {
      setProblem(messageOf(error))
    }
  }

  const remove = async (number: Schemas["PhoneNumberResponse"]) => {
    if (!window.confirm(`Remove ${number.address}?`)) return
    setProblem(undefined)
    try {
      await ok(api.DELETE(NUMBER, { params: { path: { ...path, number_id: number.id } } }))
      changed()
    } catch (error) {
      setProblem(messageOf(error))
    }
  }

  return (
    <section className="card" aria-labelledby="numbers-title">
      <h3 id="numbers-title">Phone numbers of {configuration.name}</h3>
      <p className="hint">
        Set each number's voice webhook at the carrier to{" "}
        <code>/api/v1/telephony/{configuration.provider}/inbound/{configuration.id}</code>{" "}
        under this server's public address.
      </p>
      {agents.state === "failed" && <p className="problem" role="alert">{agents.message}</p>}
      <Problem message={problem} />
      {saved && <p role="status" className="saved">{saved}</p>}
      {numbers.state === "loading" && <p role="status">Loading phone numbers…</p>}
      {numbers.state === "failed" && <p className="problem" role="alert">{numbers.message}</p>}
      {numbers.state === "ready" && numbers.value.phone_numbers.length === 0 && (
        <p className="empty">No numbers yet. {canChange ? "Add the numbers you have at the carrier below." : ""}</p>
      )}
      {numbers.state === "ready" && numbers.value.phone_numbers.length > 0 && (
        <SettingsTable
          label={`Phone numbers of ${configuration.name}`}
          columns={["Number", "Label", "Inbound calls go to"]}
        >
          {numbers.value.phone_numbers.map((number) => (
            <tr key={number.id}>
              <td>
                {number.address}
                {number.is_default_caller_id && <span className="badge">caller ID</span>}
                {!number.is_active && <span className="badge archived">inactive</span>}
                {number.caller_id_refused_at !== null && (
                  <span className="badge failed" title={number.caller_id_refused_reason ?? undefined}>
                    refused as caller ID
                  </span>
                )}
              </td>
              <td>{number.label ?? "—"}</td>
              <td>
                <AgentSelect
                  agents={agentList}
                  value={number.inbound_workflow_id}
                  label={`Agent answering ${number.address}`}
                  disabled={!canChange}
                  onChange={(id) => update(number, { inbound_workflow_id: id })}
                />
              </td>
              <td>
                {canChange && number.caller_id_refused_at !== null && (
                  <button
                    type="button"
                    onClick={() => restoreCallerId(number)}
                  >
                    Use again <span className="visually-hidden">{number.address}</span>
                  </button>
                )}
                {canChange && (
                  <button
                    type="button"
                    className="danger"
                    onClick={() => remove(number)}
                  >
                    Remove <span className="visually-hidden">{number.address}</span>
                  </button>
                )}
              </td>
            </tr>
          ))}
        </SettingsTable>
      )}
      {canChange && (
        <form onSubmit={add} aria-label={`Add a phone number to ${configuration.name}`}>
          <div className="form-grid">
            <Field
              label="Number"
              required
              value={address}
              placeholder="+14155550100"
              onChange={(e) => setAddress(e.target.value)}
              problem={adding.fields.address}
            />
            <Field
              label="Label (optional)"
              value={label}
              onChange={(e) => setLabel(e.target.value)}
              problem={adding.fields.label}
            />
            <label>
              Inbound agent
              <AgentSelect agents={agentList} value={agent} onChange={setAgent} label="Inbound agent" />
              {adding.fields.inbound_workflow_id && (
                <span className="field-problem">{adding.fields.inbound_workflow_id}</span>
              )}
            </label>
          </div>
          <Problem message={adding.problem} />
          <div className="actions">
            <button type="submit" disabled={adding.busy}>{adding.busy ? "Adding…" : "Add number"}</button>
          </div>
        </form>
      )}
    </section>
  )
}
