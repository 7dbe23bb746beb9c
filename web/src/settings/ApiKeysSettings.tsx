import { type FormEvent, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { messageOf, ok } from "../api/problems.ts"
import { atLeast, type Me } from "../me.ts"
import { useLoad } from "../useLoad.ts"
import { Field, Problem } from "./Field.tsx"
import { SettingsTable } from "./SettingsTable.tsx"
import { useAction } from "./useAction.ts"

type Scope = NonNullable<Schemas["CreateApiKeyRequest"]["scopes"]>[number]
type Created = Schemas["CreateAPIKeyResponse"]
type ApiKey = Schemas["APIKeyResponse"]

/** The documented scopes (README "Authentication"), each with what it opens. */
const scopes = [
  { scope: "agents:read", label: "Read agents, model settings and recordings" },
  { scope: "agents:write", label: "Change agents and recordings" },
  { scope: "conversations:read", label: "Read conversations (transcripts, recordings)" },
  { scope: "campaigns:read", label: "Read campaigns" },
  { scope: "campaigns:write", label: "Run campaigns" },
  { scope: "telephony:write", label: "Change telephony configurations" },
  { scope: "usage:read", label: "Read usage" },
  { scope: "calls:read", label: "Read single calls" },
  { scope: "calls:write", label: "Place single calls" },
  { scope: "webhooks:write", label: "Manage webhook endpoints" },
  { scope: "tests:read", label: "Read agent test cases and results" },
  { scope: "tests:write", label: "Change agent test cases and run them" },
  { scope: "knowledge:read", label: "Read and search the knowledge base" },
  { scope: "knowledge:write", label: "Upload, re-index and delete knowledge-base documents" }
] as const satisfies ReadonlyArray<{ readonly scope: Scope; readonly label: string }>

// Fails to compile when the server documents a scope this page does not offer.
type Unlisted = Exclude<Scope, typeof scopes[number]["scope"]>
const everyScopeListed: [Unlisted] extends [never] ? true : Unlisted = true
void everyScopeListed

const CreatedKey = ({ created, onDismiss }: { readonly created: Created; readonly onDismiss: () => void }) => {
  const [copied, setCopied] = useState<string>()
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.api_key)
      setCopied("Copied to the clipboard.")
    } catch {
      setCopied("The browser did not allow copying: select the key and copy it by hand.")
    }
  }
  return (
    <section className="card created-key" aria-labelledby="created-key-title">
      <h3 id="created-key-title">Your new key “{created.name}”</h3>
      <p>
        <strong>Copy it now: it is shown this once.</strong> Send it as <code>X-API-Key</code> or{" "}
        <code>Authorization: Bearer</code>.
      </p>
      <div className="key-row">
        <input readOnly value={created.api_key} aria-label="The new API key" onFocus={(e) => e.target.select()} />
        <button type="button" onClick={copy}>Copy</button>
      </div>
      {copied && <p role="status">{copied}</p>}
      <button type="button" className="secondary" onClick={onDismiss}>I have saved it</button>
    </section>
  )
}

const CreateForm = ({ onCreated }: { readonly onCreated: (created: Created) => void }) => {
  const [name, setName] = useState("")
  const [chosen, setChosen] = useState<ReadonlySet<Scope>>(new Set(scopes.map((entry) => entry.scope)))
  const [state, run] = useAction()
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    // Every scope ticked is a key without limits: `scopes` omitted, so scopes added later are included too.
    const all = chosen.size === scopes.length
    const created = await run(() =>
      ok(api.POST("/api/v1/user/api-keys", {
        body: { name: name.trim(), ...(all ? {} : { scopes: scopes.map((s) => s.scope).filter((s) => chosen.has(s)) }) }
      }))
    )
    if (created) {
      setName("")
      onCreated(created)
    }
  }
  const toggle = (scope: Scope, on: boolean) => {
    const next = new Set(chosen)
    if (on) next.add(scope)
    else next.delete(scope)
    setChosen(next)
  }
  return (
    <form onSubmit={submit} className="card" aria-labelledby="new-key-title">
      <h3 id="new-key-title">New API key</h3>
      <Field
        label="Name"
        required
        maxLength={100}
        value={name}
        placeholder="CI, reporting…"
        onChange={(e) => setName(e.target.value)}
        problem={state.fields.name}
      />
      <fieldset>
        <legend>Scopes</legend>
        <div className="scope-grid">
          {scopes.map((entry) => (
            <label key={entry.scope} className="inline">
              <input
                type="checkbox"
                checked={chosen.has(entry.scope)}
                onChange={(e) => toggle(entry.scope, e.target.checked)}
              />
              <span>
                <code>{entry.scope}</code> {entry.label}
              </span>
            </label>
          ))}
        </div>
        {state.fields.scopes && <span className="field-problem">{state.fields.scopes}</span>}
        {chosen.size === 0 && <span className="field-problem">Pick at least one scope.</span>}
      </fieldset>
      <Problem message={state.problem} />
      <div className="actions">
        <button type="submit" disabled={state.busy || chosen.size === 0}>
          {state.busy ? "Creating…" : "Create key"}
        </button>
      </div>
    </form>
  )
}

const when = (value: string | null) => (value ? new Date(value).toLocaleString() : "never")

/** API keys: create with scopes (shown once), list, revoke and reactivate. */
export const ApiKeysSettings = ({ me }: { readonly me: Me }) => {
  const [showRevoked, setShowRevoked] = useState(false)
  const [keys, reload] = useLoad(
    () => ok(api.GET("/api/v1/user/api-keys", { params: { query: { include_archived: showRevoked } } })),
    [showRevoked]
  )
  const [members] = useLoad(() => ok(api.GET("/api/v1/organizations/members")), [])
  const [created, setCreated] = useState<Created>()
  const [problem, setProblem] = useState<string>()
  const seesOthers = atLeast(me.role, "admin")
  const nameOf = (userId: number) => {
    if (userId === me.id) return "you"
    const member = members.state === "ready" ? members.value.find((m) => m.user_id === userId) : undefined
    return member ? member.name || member.email : `user ${userId}`
  }

  const act = async (key: ApiKey, action: "revoke" | "reactivate") => {
    setProblem(undefined)
    try {
      if (action === "revoke") {
        await ok(api.DELETE("/api/v1/user/api-keys/{id}", { params: { path: { id: key.id } } }))
      } else {
        await ok(api.PUT("/api/v1/user/api-keys/{id}/reactivate", { params: { path: { id: key.id } } }))
      }
      reload()
    } catch (error) {
      setProblem(messageOf(error))
    }
  }

  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p className="hint">
        Keys let programs use the API as you, with your role, limited to their scopes.{" "}
        {seesOthers ? "As an admin you see every member's keys." : "You see your own keys."}
      </p>
      {created && <CreatedKey created={created} onDismiss={() => setCreated(undefined)} />}
      <CreateForm
        onCreated={(key) => {
          setCreated(key)
          reload()
        }}
      />
      <div className="filters">
        <label className="inline">
          <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.target.checked)} />
          Show revoked keys
        </label>
      </div>
      <Problem message={problem} />
      {keys.state === "loading" && <p role="status">Loading API keys…</p>}
      {keys.state === "failed" && <p className="problem" role="alert">{keys.message}</p>}
      {keys.state === "ready" && keys.value.length === 0 && (
        <div className="empty">
          <p>No {showRevoked ? "" : "active "}API keys. Create one above to call the API from a script or CI.</p>
        </div>
      )}
      {keys.state === "ready" && keys.value.length > 0 && (
        <SettingsTable
          label={"API keys"}
          columns={["Name", "Key", "Scopes", seesOthers && "Created by", "Last used", "Status"]}
        >
          {keys.value.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.key_prefix}…</code>
              </td>
              <td className="scopes">
                {key.scopes.length === scopes.length ? "all" : key.scopes.join(", ")}
              </td>
              {seesOthers && <td>{nameOf(key.created_by)}</td>}
              <td>{when(key.last_used_at)}</td>
              <td>
                <span className={`badge ${key.is_active ? "active" : "archived"}`}>
                  {key.is_active ? "active" : "revoked"}
                </span>
              </td>
              <td>
                {key.is_active
                  ? (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => act(key, "revoke")}
                    >
                      Revoke <span className="visually-hidden">{key.name}</span>
                    </button>
                  )
                  : (
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => act(key, "reactivate")}
                    >
                      Reactivate <span className="visually-hidden">{key.name}</span>
                    </button>
                  )}
              </td>
            </tr>
          ))}
        </SettingsTable>
      )}
    </section>
  )
}
