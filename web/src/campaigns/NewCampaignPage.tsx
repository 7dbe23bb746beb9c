import { type ChangeEvent, type FormEvent, type ReactNode, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { type ApiProblem, messageOf, ok } from "../api/problems.ts"
import { Link, navigate } from "../router.tsx"
import { useLoad } from "../useLoad.ts"
import { circuitBreakerDefaults, rateLimitDefault, retryDefaults } from "./campaignDefaults.ts"
import { type CsvPreview, previewCsv } from "./csvPreview.ts"
import { ScheduleFields, type ScheduleForm } from "./ScheduleFields.tsx"
import { BreakerFields, FieldProblem, NumberField, RetryFields } from "./SettingsFields.tsx"

type Upload =
  | { readonly state: "none" }
  | { readonly state: "uploading"; readonly file: File; readonly preview: CsvPreview }
  | { readonly state: "uploaded"; readonly file: File; readonly preview: CsvPreview; readonly sourceId: string }
  | { readonly state: "failed"; readonly message: string }

const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"

/** Puts the file where the presigned URL says, as any API client does; the key names it in the campaign. */
const uploadFile = async (file: File) => {
  const grant = await ok(api.POST("/api/v1/s3/presigned-upload-url"))
  const put = await fetch(grant.upload_url, {
    method: "PUT",
    headers: { "content-type": grant.content_type },
    body: file
  }).catch(() => undefined)
  if (!put?.ok) {
    const detail = put
      ? ((await put.json().catch(() => undefined)) as { detail?: string } | undefined)?.detail
      : undefined
    throw new Error(detail ?? `The upload failed${put ? ` (${put.status})` : ": the server could not be reached"}.`)
  }
  return grant.s3_key
}

/** A campaign from a CSV: upload with a preview, the agent and line to call with, pacing, retries, hours, breaker. */
export const NewCampaignPage = () => {
  const [name, setName] = useState("")
  const [upload, setUpload] = useState<Upload>({ state: "none" })
  const [agentId, setAgentId] = useState("")
  const [telephonyId, setTelephonyId] = useState("")
  const [rate, setRate] = useState(String(rateLimitDefault))
  const [concurrency, setConcurrency] = useState("")
  const [retry, setRetry] = useState<Schemas["RetryConfigResponse"]>(retryDefaults)
  const [schedule, setSchedule] = useState<ScheduleForm>({ enabled: false, timezone: browserZone, slots: [] })
  const [breaker, setBreaker] = useState<Schemas["CircuitBreakerConfigResponse"]>(circuitBreakerDefaults)
  const [problem, setProblem] = useState<string>()
  const [problems, setProblems] = useState<Record<string, string>>({})
  const [busy, setBusy] = useState(false)
  const [agents] = useLoad(() => ok(api.GET("/api/v1/workflow/fetch", { params: { query: { status: "active" } } })), [])
  const [telephony] = useLoad(() => ok(api.GET("/api/v1/organizations/telephony-configs")), [])

  const pickFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0]
    if (!file) return
    setProblems((current) => ({ ...current, source_id: "" }))
    try {
      const preview = await previewCsv(file)
      if (preview.columns.length === 0) {
        throw new Error("The file is empty: it needs a header row and one row per contact.")
      }
      setUpload({ state: "uploading", file, preview })
      if (!name) setName(file.name.replace(/\.csv$/i, ""))
      setUpload({ state: "uploaded", file, preview, sourceId: await uploadFile(file) })
    } catch (error) {
      setUpload({ state: "failed", message: messageOf(error) })
    }
  }

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setProblem(undefined)
    setProblems({})
    if (upload.state !== "uploaded") {
      setProblems({ source_id: "Choose the contacts' CSV file first." })
      return
    }
    setBusy(true)
    try {
      const created = await ok(api.POST("/api/v1/campaign/create", {
        body: {
          name: name.trim(),
          workflow_id: Number(agentId),
          source_type: "csv",
          source_id: upload.sourceId,
          ...(telephonyId ? { telephony_configuration_id: Number(telephonyId) } : {}),
          rate_limit_per_second: Number(rate),
          max_concurrency: concurrency.trim() ? Number(concurrency) : null,
          retry_config: retry,
          schedule_config: schedule.enabled ? { ...schedule, slots: [...schedule.slots] } : null,
          circuit_breaker: breaker
        }
      }))
      navigate(`/campaigns/${created.id}`)
    } catch (error) {
      // A setting that may be null is a union: beside the real problem its "null" branch reports "Expected null".
      const fields = ((error as Partial<ApiProblem>).fields ?? []).filter((field) => field.message !== "Expected null")
      setProblem(
        fields.length > 0 ?
          `Please correct: ${fields.map((field) => `${field.field || "request"}: ${field.message}`).join("; ")}` :
          messageOf(error)
      )
      setProblems(Object.fromEntries(fields.map((field) => [field.field, field.message])))
      setBusy(false)
    }
  }

  const readyTelephony = telephony.state === "ready" ? telephony.value.configurations : []
  const noAgents = agents.state === "ready" && agents.value.length === 0
  return (
    <section className="narrow">
      <h1>New campaign</h1>
      <p>
        Upload the contacts as a CSV file with a <code>phone_number</code>{" "}
        column; every other column reaches the agent as a variable (for example{" "}
        <code>first_name</code>). The campaign is created ready to start.
      </p>
      {problem && <p role="alert" className="problem">{problem}</p>}
      <form onSubmit={submit} noValidate>
        <fieldset>
          <legend>Contacts</legend>
          <label>
            CSV file
            <input type="file" accept=".csv,text/csv" onChange={pickFile} aria-describedby="upload-status" />
          </label>
          <p id="upload-status" role="status" className={upload.state === "failed" ? "field-problem" : "hint"}>
            {upload.state === "uploading" && `Uploading ${upload.file.name}…`}
            {upload.state === "uploaded" && `${upload.file.name} uploaded (${upload.file.size} bytes).`}
            {upload.state === "failed" && upload.message}
          </p>
          <FieldProblem of={problems.source_id} />
          {(upload.state === "uploading" || upload.state === "uploaded") && (
            <div className="preview">
              <p>
                Columns: {upload.preview.columns.map((column) => <code key={column}>{column}</code>).reduce<
                  Array<ReactNode>
                >((all, item, index) => (index === 0 ? [item] : [...all, ", ", item]), [])}
                {!upload.preview.columns.includes("phone_number") && (
                  <span className="field-problem">
                    There is no phone_number column: the server will refuse this file.
                  </span>
                )}
              </p>
              <table aria-label="First rows of the file">
                <thead>
                  <tr>{upload.preview.columns.map((column) => <th key={column} scope="col">{column}</th>)}</tr>
                </thead>
                <tbody>
                  {upload.preview.rows.map((row, index) => (
                    <tr key={index}>{upload.preview.columns.map((_, at) => <td key={at}>{row[at] ?? ""}</td>)}</tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </fieldset>
        <label>
          Name
          <input
            required
            maxLength={255}
            value={name}
            onChange={(e) => setName(e.target.value)}
            aria-invalid={problems.name ? true : undefined}
          />
          <FieldProblem of={problems.name} />
        </label>
        <label>
          Agent
          <select
            required
            value={agentId}
            onChange={(e) => setAgentId(e.target.value)}
            aria-invalid={problems.workflow_id ? true : undefined}
          >
            <option value="">Choose an agent</option>
            {agents.state === "ready" &&
              agents.value.map((agent) => <option key={agent.id} value={agent.id}>{agent.name}</option>)}
          </select>
          <FieldProblem of={problems.workflow_id ?? (agents.state === "failed" ? agents.message : undefined)} />
          {noAgents && (
            <span className="hint">
              No agents yet: <Link href="/agents/new">create one</Link> first.
            </span>
          )}
        </label>
        <label>
          Telephony configuration
          <select
            value={telephonyId}
            onChange={(e) => setTelephonyId(e.target.value)}
            aria-invalid={problems.telephony_configuration_id ? true : undefined}
          >
            <option value="">The organization's default for outbound calls</option>
            {readyTelephony.map((config) => (
              <option key={config.id} value={config.id}>
                {config.name} ({config.provider}){config.is_ready_for_outbound
                  ? ""
                  : ` — ${config.outbound_blocked_reason ?? "not ready"}`}
              </option>
            ))}
          </select>
          <FieldProblem
            of={problems.telephony_configuration_id ?? (telephony.state === "failed" ? telephony.message : undefined)}
          />
          {telephony.state === "ready" && readyTelephony.length === 0 && (
            <span className="hint">
              No telephony configuration yet: a campaign cannot start until one with a caller number exists.
            </span>
          )}
        </label>
        <fieldset>
          <legend>Pacing</legend>
          <NumberField
            label="Calls per second"
            min={1}
            max={100}
            value={rate}
            onChange={setRate}
            problem={problems.rate_limit_per_second}
            hint="1 to 100; default 1."
          />
          <NumberField
            label="Calls at once"
            min={1}
            max={100}
            value={concurrency}
            onChange={setConcurrency}
            problem={problems.max_concurrency}
            hint="Empty: no limit beyond the organization's."
          />
        </fieldset>
        <RetryFields retry={retry} setRetry={setRetry} problems={problems} />
        <ScheduleFields value={schedule} onChange={setSchedule} problems={problems} />
        <BreakerFields breaker={breaker} setBreaker={setBreaker} problems={problems} />
        <div className="actions">
          <button type="submit" disabled={busy || upload.state === "uploading"}>
            {busy ? "Creating…" : "Create campaign"}
          </button>
          <Link href="/campaigns" className="button secondary">Cancel</Link>
        </div>
      </form>
    </section>
  )
}
