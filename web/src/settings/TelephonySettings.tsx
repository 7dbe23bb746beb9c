import { useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { messageOf, ok } from "../api/problems.ts"
import { atLeast, type Me } from "../me.ts"
import { useLoad } from "../useLoad.ts"
import { carriers, isCarrier } from "./carrierFields.ts"
import { Problem } from "./Field.tsx"
import { PhoneNumbers } from "./PhoneNumbers.tsx"
import { SettingsTable } from "./SettingsTable.tsx"
import { CONFIGS, ConfigurationForm, EditConfiguration } from "./TelephonyConfigurationForm.tsx"

export const TelephonySettings = ({ me }: { readonly me: Me }) => {
  const canChange = atLeast(me.role, "admin")
  const [configs, reload] = useLoad(() => ok(api.GET(CONFIGS)), [])
  const [editing, setEditing] = useState<"new" | number>()
  const [numbersOf, setNumbersOf] = useState<number>()
  const [problem, setProblem] = useState<string>()

  const done = () => {
    setEditing(undefined)
    reload()
  }

  const remove = async (configuration: Schemas["TelephonyConfigurationListItem"]) => {
    if (!window.confirm(`Delete the telephony configuration “${configuration.name}” and its phone numbers?`)) return
    setProblem(undefined)
    try {
      await ok(api.DELETE(`${CONFIGS}/{config_id}`, { params: { path: { config_id: configuration.id } } }))
      if (numbersOf === configuration.id) setNumbersOf(undefined)
      reload()
    } catch (error) {
      setProblem(messageOf(error))
    }
  }

  const list = configs.state === "ready" ? configs.value.configurations : []
  const shownNumbers = list.find((configuration) => configuration.id === numbersOf)
  return (
    <section aria-labelledby="telephony-title">
      <div className="page-head">
        <h2 id="telephony-title">Telephony</h2>
        {canChange && editing === undefined && (
          <button type="button" onClick={() => setEditing("new")}>New configuration</button>
        )}
      </div>
      <p className="hint">
        Your carrier accounts. Credentials are stored encrypted and only ever shown masked. Point a number at an agent
        to answer its inbound calls.
      </p>
      {!canChange && <p className="notice">Changing telephony settings needs an admin or owner.</p>}
      {editing === "new" && <ConfigurationForm existing={undefined} onDone={done} />}
      {typeof editing === "number" && <EditConfiguration id={editing} onDone={done} />}
      <Problem message={problem} />
      {configs.state === "loading" && <p role="status">Loading telephony configurations…</p>}
      {configs.state === "failed" && <p className="problem" role="alert">{configs.message}</p>}
      {configs.state === "ready" && list.length === 0 && editing === undefined && (
        <div className="empty">
          <p>
            No telephony configuration yet. {canChange
              ? "Create one with your carrier's credentials to place and receive calls."
              : "Ask an admin to add one."}
          </p>
        </div>
      )}
      {list.length > 0 && (
        <SettingsTable label={"Telephony configurations"} columns={["Name", "Carrier", "Numbers", "Outbound"]}>
          {list.map((configuration) => (
            <tr key={configuration.id}>
              <td>
                {configuration.name}
                {configuration.is_default_outbound && <span className="badge">default</span>}
                {configuration.inactive && <span className="badge archived">inactive</span>}
              </td>
              <td>
                {isCarrier(configuration.provider)
                  ? carriers[configuration.provider].label
                  : configuration.provider}
              </td>
              <td>{configuration.phone_number_count}</td>
              <td>
                {configuration.is_ready_for_outbound
                  ? "Ready"
                  : configuration.outbound_blocked_reason ?? "Not ready"}
              </td>
              <td>
                <div className="actions">
                  <button
                    type="button"
                    className="secondary"
                    aria-expanded={numbersOf === configuration.id}
                    onClick={() => setNumbersOf(numbersOf === configuration.id ? undefined : configuration.id)}
                  >
                    Phone numbers <span className="visually-hidden">of {configuration.name}</span>
                  </button>
                  {canChange && (
                    <>
                      <button
                        type="button"
                        className="secondary"
                        onClick={() => setEditing(configuration.id)}
                      >
                        Edit <span className="visually-hidden">{configuration.name}</span>
                      </button>
                      <button
                        type="button"
                        className="danger"
                        onClick={() =>
                          remove(configuration)}
                      >
                        Delete <span className="visually-hidden">{configuration.name}</span>
                      </button>
                    </>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </SettingsTable>
      )}
      {shownNumbers && (
        <PhoneNumbers key={shownNumbers.id} configuration={shownNumbers} canChange={canChange} onChanged={reload} />
      )}
    </section>
  )
}
