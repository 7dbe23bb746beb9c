import { type FormEvent, useEffect, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { messageOf, ok } from "../api/problems.ts"
import { atLeast, type Me } from "../me.ts"
import { useLoad } from "../useLoad.ts"
import { Field, Problem } from "./Field.tsx"
import { useAction } from "./useAction.ts"

type Kind = "llm" | "stt" | "tts"
type Section = Schemas["ModelSettingsSection"]
type CheckResult = Schemas["ModelCheckResponse"]

/** The providers the server speaks (src/voice/speechProviders.ts); the LLM is any OpenAI-compatible endpoint. */
const providers: Record<Kind, ReadonlyArray<{ readonly value: string; readonly label: string }>> = {
  llm: [{ value: "openai", label: "OpenAI-compatible" }],
  stt: [{ value: "deepgram", label: "Deepgram" }, { value: "openai", label: "OpenAI (or a Whisper-style server)" }],
  tts: [
    { value: "elevenlabs", label: "ElevenLabs" },
    { value: "cartesia", label: "Cartesia" },
    { value: "deepgram", label: "Deepgram" },
    { value: "openai", label: "OpenAI" },
    { value: "local", label: "Local voice (eSpeak, for development)" }
  ]
}

const titles: Record<Kind, string> = { llm: "Language model", stt: "Speech to text", tts: "Text to speech" }

interface Draft {
  provider: string
  model: string
  base_url: string
  api_key: string
  voice: string
  language: string
}

const draftOf = (kind: Kind, section: Section | null): Draft => ({
  provider: section?.provider ?? providers[kind][0]!.value,
  model: section?.model ?? "",
  base_url: section?.base_url ?? "",
  api_key: "",
  voice: section?.voice ?? "",
  language: section?.language ?? ""
})

/**
 * The PUT body of one section. The key goes only when one was typed: the masked value shown is
 * never sent back, and an untouched key is kept by the server while the endpoint stays the same.
 */
const bodyOf = (kind: Kind, draft: Draft) => {
  const common = {
    model: draft.model.trim(),
    base_url: draft.base_url.trim() || null,
    ...(draft.api_key.trim() ? { api_key: draft.api_key.trim() } : {})
  }
  if (kind === "llm") return { llm: { ...common, provider: "openai" as const } }
  const { model, ...rest } = common
  const speech = {
    ...rest,
    ...(model ? { model } : {}),
    provider: draft.provider,
    language: draft.language.trim() || null,
    ...(kind === "tts" ? { voice: draft.voice.trim() || null } : {})
  }
  return kind === "stt" ? { stt: speech } : { tts: speech }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

const CheckOutcome = ({ result }: { readonly result: CheckResult }) => {
  const where = `${result.provider}${result.model ? ` ${result.model}` : ""}, ${result.latency_ms} ms`
  if (result.kind === "llm") {
    return (
      <div className="check-result" role="status">
        <p>
          <strong>The model answered</strong> ({where}): <q>{result.reply || "(an empty reply)"}</q>
        </p>
      </div>
    )
  }
  if (result.kind === "stt") {
    return (
      <div className="check-result" role="status">
        <p>
          <strong>Heard</strong> ({where}): <q>{result.transcript || "(nothing)"}</q>
        </p>
        <span className="hint">The phrase spoken was “{result.phrase}”.</span>
      </div>
    )
  }
  return (
    <div className="check-result" role="status">
      <p>
        <strong>Spoken</strong> ({where}): {seconds(result.audio_duration_ms ?? 0)} of audio,{" "}
        {Math.round((result.audio_bytes ?? 0) / 1024)} KB
      </p>
      <audio controls src={`data:audio/wav;base64,${result.audio_wav_base64 ?? ""}`} aria-label="The test phrase" />
    </div>
  )
}

const ModelSectionForm = (
  { kind, section, canChange, onSaved }: {
    readonly kind: Kind
    readonly section: Section | null
    readonly canChange: boolean
    readonly onSaved: (saved: Schemas["ModelConfigurationsResponse"]) => void
  }
) => {
  const [draft, setDraft] = useState(() => draftOf(kind, section))
  const [saved, setSaved] = useState(false)
  const [save, runSave] = useAction()
  const [check, setCheck] = useState<
    { state: "idle" } | { state: "busy" } | { state: "done"; result: CheckResult } | {
      state: "failed"
      message: string
    }
  >({ state: "idle" })
  // Saving another section brings new objects for every section: only a real change resets this draft.
  const stored = JSON.stringify(section)
  useEffect(() => setDraft(draftOf(kind, section)), [kind, stored])

  const set = (patch: Partial<Draft>) => {
    setSaved(false)
    setDraft((current) => ({ ...current, ...patch }))
  }
  const problem = (field: string) => save.fields[`${kind}.${field}`]
  const endpointChanged = section !== null &&
    (draft.provider !== section.provider || (draft.base_url.trim() || null) !== section.base_url)
  const keyDropped = endpointChanged && section.api_key_set && draft.api_key.trim() === ""

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    const reply = await runSave(() =>
      ok(api.PUT("/api/v1/organizations/model-configurations", { body: bodyOf(kind, draft) }))
    )
    if (reply) {
      setSaved(true)
      onSaved(reply)
    }
  }

  const test = async () => {
    setCheck({ state: "busy" })
    try {
      const result = await ok(api.POST("/api/v1/organizations/model-configurations/test", { body: { kind } }))
      setCheck({ state: "done", result })
    } catch (error) {
      setCheck({ state: "failed", message: messageOf(error) })
    }
  }

  const keyHint = section?.api_key_set
    ? `Stored: ${section.api_key ?? "set"}. Leave empty to keep it.`
    : kind === "llm"
    ? "Not needed for a local model."
    : "Not needed for the local voice or a server of your own."

  return (
    <section className="card" aria-labelledby={`${kind}-title`}>
      <div className="panel-head">
        <h3 id={`${kind}-title`}>{titles[kind]}</h3>
        {section === null && <span className="badge">not configured</span>}
      </div>
      <form onSubmit={submit}>
        <fieldset disabled={!canChange} className="plain">
          <legend className="visually-hidden">{titles[kind]} settings</legend>
          <div className="form-grid">
            <label>
              Provider
              <select value={draft.provider} onChange={(e) => set({ provider: e.target.value })}>
                {providers[kind].map((option) => <option key={option.value} value={option.value}>{option.label}
                </option>)}
              </select>
              {problem("provider") && <span className="field-problem">{problem("provider")}</span>}
            </label>
            <Field
              label="Model"
              value={draft.model}
              required={kind === "llm"}
              placeholder={kind === "llm" ? "gpt-4o-mini" : "the provider's default"}
              onChange={(e) => set({ model: e.target.value })}
              problem={problem("model")}
            />
            <Field
              label="Base URL"
              type="url"
              value={draft.base_url}
              placeholder="the provider's own API"
              hint={kind === "llm" ? "An OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1" : undefined}
              onChange={(e) => set({ base_url: e.target.value })}
              problem={problem("base_url")}
            />
            <Field
              label="API key"
              type="password"
              autoComplete="off"
              value={draft.api_key}
              placeholder={section?.api_key_set ? section.api_key ?? "" : ""}
              hint={keyHint}
              onChange={(e) => set({ api_key: e.target.value })}
              problem={problem("api_key")}
            />
            {kind === "tts" && (
              <Field
                label="Voice"
                value={draft.voice}
                onChange={(e) => set({ voice: e.target.value })}
                problem={problem("voice")}
              />
            )}
            {kind !== "llm" && (
              <Field
                label="Language"
                value={draft.language}
                placeholder="en"
                onChange={(e) => set({ language: e.target.value })}
                problem={problem("language")}
              />
            )}
          </div>
          {keyDropped && (
            <p className="notice">
              The stored key is never sent to a different provider or address: type the key again, or save without one.
            </p>
          )}
        </fieldset>
        <Problem message={save.problem} />
        {saved && <p role="status" className="saved">Saved.</p>}
        <div className="actions">
          {canChange && <button type="submit" disabled={save.busy}>{save.busy ? "Saving…" : "Save"}</button>}
          <button
            type="button"
            className="secondary"
            disabled={!canChange || section === null || check.state === "busy"}
            onClick={test}
          >
            {check.state === "busy" ? "Testing…" : `Test ${titles[kind].toLowerCase()}`}
          </button>
          {section === null && <span className="hint">Save a configuration to test it.</span>}
        </div>
      </form>
      {check.state === "done" && <CheckOutcome result={check.result} />}
      {check.state === "failed" && <p className="problem" role="alert">{check.message}</p>}
    </section>
  )
}

/** The organization's LLM, STT and TTS: saved section by section, each tested with one real request. */
export const ModelsSettings = ({ me }: { readonly me: Me }) => {
  const [loaded] = useLoad(() => ok(api.GET("/api/v1/organizations/model-configurations")), [])
  const [settings, setSettings] = useState<Schemas["ModelConfigurationsResponse"]>()
  useEffect(() => {
    if (loaded.state === "ready") setSettings(loaded.value)
  }, [loaded])
  const canChange = atLeast(me.role, "admin")
  return (
    <section aria-labelledby="models-title">
      <h2 id="models-title">Models</h2>
      <p className="hint">
        The language model writes every reply; speech to text and text to speech are used by voice calls. Keys are
        stored encrypted and never shown again.
      </p>
      {!canChange && (
        <p className="notice">You can see these settings; changing or testing them needs an admin or owner.</p>
      )}
      {loaded.state === "loading" && <p role="status">Loading model settings…</p>}
      {loaded.state === "failed" && <p className="problem" role="alert">{loaded.message}</p>}
      {settings &&
        (["llm", "stt", "tts"] as const).map((kind) => (
          <ModelSectionForm
            key={kind}
            kind={kind}
            section={settings[kind]}
            canChange={canChange}
            onSaved={setSettings}
          />
        ))}
    </section>
  )
}
