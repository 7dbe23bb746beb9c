import { type FormEvent, useEffect, useRef, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { messageOf, ok, problemOf } from "../api/problems.ts"
import { useLoad } from "../useLoad.ts"
import { Field, Problem } from "./Field.tsx"
import { SettingsTable } from "./SettingsTable.tsx"
import { useAction } from "./useAction.ts"

type Recording = Schemas["WorkflowRecordingResponse"]

const RECORDING = "/api/v1/workflow-recordings/{id}"

/** Browsers name some audio types differently from the server (`audio/x-wav`, `audio/mp3`), or not at all. */
const audioType = (file: File) => {
  const name = file.name.toLowerCase()
  if (name.endsWith(".mp3") || file.type === "audio/mp3") return "audio/mpeg"
  if (name.endsWith(".wav") || file.type === "audio/x-wav" || file.type === "audio/wave") return "audio/wav"
  return file.type || "application/octet-stream"
}

/** The existing upload flow for clips: a signed URL, the file PUT there, then registered. */
const uploadClip = async (file: File, recordingId: string, label: string) => {
  const grants = await ok(api.POST("/api/v1/workflow-recordings/upload-url", {
    body: { files: [{ filename: file.name, mime_type: audioType(file), file_size: file.size }] }
  }))
  const grant = grants.items[0]!
  const put = await fetch(grant.upload_url, {
    method: "PUT",
    headers: { "content-type": grant.content_type },
    body: file
  }).catch(() => undefined)
  if (!put) throw problemOf(0, undefined)
  if (!put.ok) throw problemOf(put.status, await put.json().catch(() => undefined))
  return ok(api.POST("/api/v1/workflow-recordings", {
    body: {
      recordings: [{
        recording_id: recordingId.trim() || grant.recording_id,
        storage_key: grant.storage_key,
        label: label.trim() || file.name.replace(/\.[^.]+$/, "")
      }]
    }
  }))
}

const UploadForm = ({ onUploaded }: { readonly onUploaded: () => void }) => {
  const [file, setFile] = useState<File>()
  const [recordingId, setRecordingId] = useState("")
  const [label, setLabel] = useState("")
  const [state, run] = useAction()
  const input = useRef<HTMLInputElement>(null)

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    if (!file) return
    const done = await run(() => uploadClip(file, recordingId, label))
    if (done) {
      setFile(undefined)
      setRecordingId("")
      setLabel("")
      if (input.current) input.current.value = ""
      onUploaded()
    }
  }

  // Registration names the item: `recordings.0.recording_id` is this form's recording id.
  const itemProblem = (field: string) => state.fields[`recordings.0.${field}`] ?? state.fields[field]
  return (
    <form onSubmit={submit} className="card" aria-labelledby="upload-title">
      <h3 id="upload-title">Upload a clip</h3>
      <div className="form-grid">
        <label>
          Audio file
          <input
            ref={input}
            type="file"
            required
            accept="audio/wav,audio/x-wav,audio/mpeg,.wav,.mp3"
            aria-invalid={itemProblem("storage_key") ? true : undefined}
            onChange={(e) => setFile(e.target.files?.[0])}
          />
          <span className="hint">WAV or MP3, 8–48 kHz.</span>
          {itemProblem("storage_key") && <span className="field-problem">{itemProblem("storage_key")}</span>}
        </label>
        <Field
          label="Label (optional)"
          value={label}
          maxLength={200}
          placeholder="the file's name"
          onChange={(e) => setLabel(e.target.value)}
          problem={itemProblem("label")}
        />
        <Field
          label="Recording ID (optional)"
          value={recordingId}
          maxLength={64}
          pattern="[A-Za-z0-9_\-]+"
          placeholder="welcome"
          hint="How agents name the clip; a free one is chosen when empty."
          onChange={(e) => setRecordingId(e.target.value)}
          problem={itemProblem("recording_id")}
        />
      </div>
      <Problem message={state.problem} />
      <div className="actions">
        <button type="submit" disabled={state.busy || !file}>{state.busy ? "Uploading…" : "Upload"}</button>
      </div>
    </form>
  )
}

/** Plays a clip: the audio is fetched with the session's credentials, then handed to an audio element. */
const Player = ({ recording }: { readonly recording: Recording }) => {
  const [source, setSource] = useState<string>()
  const [problem, setProblem] = useState<string>()
  useEffect(() => {
    let url: string | undefined
    let current = true
    api.GET(`${RECORDING}/audio`, { params: { path: { id: recording.recording_id } }, parseAs: "blob" }).then(
      (result) => {
        if (!current) return
        if (!result.response.ok) return setProblem(problemOf(result.response.status, result.error).message)
        url = URL.createObjectURL(result.data as Blob)
        setSource(url)
      },
      () => current && setProblem(problemOf(0, undefined).message)
    )
    return () => {
      current = false
      if (url) URL.revokeObjectURL(url)
    }
  }, [recording.recording_id])
  if (problem) return <span className="field-problem" role="alert">{problem}</span>
  if (!source) return <span role="status">Loading audio…</span>
  return <audio controls autoPlay src={source} aria-label={`Clip ${recording.label || recording.recording_id}`} />
}

const RenameForm = (
  { recording, onDone }: { readonly recording: Recording; readonly onDone: (renamed: boolean) => void }
) => {
  const [label, setLabel] = useState(recording.label)
  const [state, run] = useAction()
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    const done = await run(() =>
      ok(api.PATCH(RECORDING, { params: { path: { id: recording.recording_id } }, body: { label: label.trim() } }))
    )
    if (done) onDone(true)
  }
  return (
    <form onSubmit={submit} className="inline-form">
      <Field
        label={<span className="visually-hidden">New label for {recording.recording_id}</span>}
        value={label}
        maxLength={200}
        autoFocus
        onChange={(e) => setLabel(e.target.value)}
        problem={state.fields.label ?? state.problem}
      />
      <button type="submit" disabled={state.busy}>Save</button>
      <button type="button" className="secondary" onClick={() => onDone(false)}>Cancel</button>
    </form>
  )
}

const duration = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** The organization's clips for greetings and transitions: upload, play, rename, delete. */
export const RecordingsSettings = () => {
  const [recordings, reload] = useLoad(() => ok(api.GET("/api/v1/workflow-recordings")), [])
  const [playing, setPlaying] = useState<string>()
  const [renaming, setRenaming] = useState<string>()
  const [problem, setProblem] = useState<string>()

  const remove = async (recording: Recording) => {
    if (!window.confirm(`Delete the clip “${recording.label || recording.recording_id}”?`)) return
    setProblem(undefined)
    try {
      await ok(api.DELETE(RECORDING, { params: { path: { id: recording.recording_id } } }))
      if (playing === recording.recording_id) setPlaying(undefined)
      reload()
    } catch (error) {
      setProblem(messageOf(error))
    }
  }

  const list = recordings.state === "ready" ? recordings.value.recordings : []
  return (
    <section aria-labelledby="recordings-title">
      <h2 id="recordings-title">Recordings</h2>
      <p className="hint">
        Recorded clips an agent can greet with or speak on a transition, named in the editor by their recording ID.
      </p>
      <UploadForm onUploaded={reload} />
      <Problem message={problem} />
      {recordings.state === "loading" && <p role="status">Loading recordings…</p>}
      {recordings.state === "failed" && <p className="problem" role="alert">{recordings.message}</p>}
      {recordings.state === "ready" && list.length === 0 && (
        <div className="empty">
          <p>No clips yet. Upload a WAV or MP3 above to greet callers with a recorded voice.</p>
        </div>
      )}
      {list.length > 0 && (
        <SettingsTable label={"Recordings"} columns={["Label", "Recording ID", "Length", "Source"]}>
          {list.map((recording) => (
            <tr key={recording.id}>
              <td>
                {renaming === recording.recording_id
                  ? (
                    <RenameForm
                      recording={recording}
                      onDone={(renamed) => {
                        setRenaming(undefined)
                        if (renamed) reload()
                      }}
                    />
                  )
                  : recording.label || <em>no label</em>}
                {playing === recording.recording_id && <Player recording={recording} />}
              </td>
              <td>
                <code>{recording.recording_id}</code>
              </td>
              <td>{duration(recording.duration_ms)}</td>
              <td>
                {recording.source_format}, {recording.source_sample_rate / 1000} kHz,{" "}
                {Math.round(recording.size_bytes / 1024)} KB
              </td>
              <td>
                <div className="actions">
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => setPlaying(playing === recording.recording_id ? undefined : recording.recording_id)}
                  >
                    {playing === recording.recording_id ? "Stop" : "Play"}{" "}
                    <span className="visually-hidden">{recording.label || recording.recording_id}</span>
                  </button>
                  <button type="button" className="secondary" onClick={() => setRenaming(recording.recording_id)}>
                    Rename <span className="visually-hidden">{recording.label || recording.recording_id}</span>
                  </button>
                  <button type="button" className="danger" onClick={() => remove(recording)}>
                    Delete <span className="visually-hidden">{recording.label || recording.recording_id}</span>
                  </button>
                </div>
              </td>
            </tr>
          ))}
        </SettingsTable>
      )}
    </section>
  )
}
