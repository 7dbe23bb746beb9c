import { type FormEvent, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { ok } from "../api/problems.ts"
import type { paths } from "../api/schema.ts"
import { useLoad } from "../useLoad.ts"
import { type Carrier, carriers, isCarrier } from "./carrierFields.ts"
import { Field, Problem } from "./Field.tsx"
import { useAction } from "./useAction.ts"

type Configuration = Schemas["TelephonyConfigurationResponse"]
type CreateBody = paths["/api/v1/organizations/telephony-configs"]["post"]["requestBody"]["content"]["application/json"]

export const CONFIGS = "/api/v1/organizations/telephony-configs"

interface Draft {
  name: string
  provider: Carrier
  values: Record<string, string>
  api_base_url: string
  default_region: string
  is_default_outbound: boolean
  amd_enabled: boolean
}

const text = (value: unknown) => (typeof value === "string" ? value : "")

const draftOf = (existing: Configuration | undefined): Draft => {
  const provider = existing && isCarrier(existing.provider) ? existing.provider : "twilio"
  const config = existing?.config ?? {}
  return {
    name: existing?.name ?? "",
    provider,
    // Secrets start empty: the masked value is shown as a placeholder and never sent back.
    values: Object.fromEntries(
      carriers[provider].fields.map((field) => [field.name, field.secret ? "" : text(config[field.name])])
    ),
    api_base_url: text(config.api_base_url),
    default_region: existing?.default_region ?? "",
    is_default_outbound: existing?.is_default_outbound ?? false,
    amd_enabled: config.amd_enabled === true
  }
}

/** The request's `config`: typed secrets only; an untouched one is kept by the server while the endpoint stays. */
const configOf = (draft: Draft) => ({
  provider: draft.provider,
  ...Object.fromEntries(
    carriers[draft.provider].fields.flatMap((field): Array<[string, string | null]> => {
      const value = draft.values[field.name]?.trim() ?? ""
      if (value === "") return field.secret || field.required ? [] : [[field.name, null]]
      return [[field.name, value]]
    })
  ),
  api_base_url: draft.api_base_url.trim() || null,
  amd_enabled: draft.amd_enabled
})

/** A carrier configuration, new or stored: secrets write-only, the API's refusals beside their fields. */
export const ConfigurationForm = (
  { existing, onDone }: { readonly existing: Configuration | undefined; readonly onDone: () => void }
) => {
  const [draft, setDraft] = useState(() => draftOf(existing))
  const [state, run] = useAction()
  const set = (patch: Partial<Draft>) => setDraft((current) => ({ ...current, ...patch }))
  const problem = (field: string) => state.fields[field]

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    const common = {
      name: draft.name.trim(),
      is_default_outbound: draft.is_default_outbound,
      default_region: draft.default_region.trim().toUpperCase() || null,
      config: configOf(draft)
    }
    const done = await run(() =>
      existing
        ? ok(api.PUT(`${CONFIGS}/{config_id}`, { params: { path: { config_id: existing.id } }, body: common }))
        : ok(api.POST(CONFIGS, { body: common as CreateBody }))
    )
    if (done) onDone()
  }

  return (
    <form onSubmit={submit} className="card" aria-labelledby="configuration-form-title">
      <h3 id="configuration-form-title">{existing ? `Edit ${existing.name}` : "New telephony configuration"}</h3>
      <div className="form-grid">
        <Field
          label="Name"
          required
          maxLength={64}
          value={draft.name}
          onChange={(e) => set({ name: e.target.value })}
          problem={problem("name")}
        />
        <label>
          Carrier
          <select
            value={draft.provider}
            onChange={(e) => {
              const provider = e.target.value as Carrier
              set({
                provider,
                values: Object.fromEntries(carriers[provider].fields.map((field) => [field.name, ""]))
              })
            }}
          >
            {Object.entries(carriers).map(([value, carrier]) => (
              <option key={value} value={value}>{carrier.label}</option>
            ))}
          </select>
          {problem("config.provider") && <span className="field-problem">{problem("config.provider")}</span>}
        </label>
        {carriers[draft.provider].fields.map((field) => {
          const stored = existing?.provider === draft.provider ? text(existing.config[field.name]) : ""
          const label = `${field.label}${field.required ? "" : " (optional)"}`
          const onChange = (value: string) => set({ values: { ...draft.values, [field.name]: value } })
          if (field.multiline) {
            return (
              <label key={field.name} className="wide">
                {label}
                <textarea
                  rows={3}
                  value={draft.values[field.name] ?? ""}
                  required={field.required && !stored}
                  placeholder={stored ? `Stored: ${stored}. Leave empty to keep it.` : ""}
                  aria-invalid={problem(`config.${field.name}`) ? true : undefined}
                  onChange={(e) => onChange(e.target.value)}
                />
                {problem(`config.${field.name}`) && (
                  <span className="field-problem">{problem(`config.${field.name}`)}</span>
                )}
              </label>
            )
          }
          return (
            <Field
              key={field.name}
              label={label}
              type={field.secret ? "password" : "text"}
              autoComplete="off"
              required={field.required && !(field.secret && stored)}
              value={draft.values[field.name] ?? ""}
              placeholder={field.secret && stored ? stored : ""}
              hint={field.secret && stored ? `Stored: ${stored}. Leave empty to keep it.` : undefined}
              onChange={(e) => onChange(e.target.value)}
              problem={problem(`config.${field.name}`)}
            />
          )
        })}
        <Field
          label="API base URL (optional)"
          type="url"
          value={draft.api_base_url}
          placeholder="the carrier's public API"
          hint="A regional edge or a gateway of your own. Changing it (or the account) needs the secrets again."
          onChange={(e) => set({ api_base_url: e.target.value })}
          problem={problem("config.api_base_url")}
        />
        <Field
          label="Default region (optional)"
          maxLength={2}
          value={draft.default_region}
          placeholder="US"
          hint="Two letters: how numbers without + are read."
          onChange={(e) => set({ default_region: e.target.value })}
          problem={problem("default_region")}
        />
      </div>
      <label className="inline">
        <input
          type="checkbox"
          checked={draft.is_default_outbound}
          onChange={(e) => set({ is_default_outbound: e.target.checked })}
        />
        Default for outbound calls
      </label>
      <label className="inline">
        <input type="checkbox" checked={draft.amd_enabled} onChange={(e) => set({ amd_enabled: e.target.checked })} />
        Answering-machine detection
      </label>
      <Problem message={state.problem} />
      <div className="actions">
        <button type="submit" disabled={state.busy}>{state.busy ? "Saving…" : existing ? "Save" : "Create"}</button>
        <button type="button" className="secondary" onClick={onDone}>Cancel</button>
      </div>
    </form>
  )
}

export const EditConfiguration = ({ id, onDone }: { readonly id: number; readonly onDone: () => void }) => {
  const [loaded] = useLoad(() => ok(api.GET(`${CONFIGS}/{config_id}`, { params: { path: { config_id: id } } })), [id])
  if (loaded.state === "loading") return <p role="status">Loading the configuration…</p>
  if (loaded.state === "failed") return <p className="problem" role="alert">{loaded.message}</p>
  return <ConfigurationForm existing={loaded.value} onDone={onDone} />
}

/** Carrier accounts (credentials masked) and, for each, its phone numbers and the agent answering them. */
