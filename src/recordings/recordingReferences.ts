import type { WorkflowGraph } from "../graph/definition.ts"

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const named = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? [value.trim()] : [])

/**
 * Every recording id a workflow definition names (audio greetings, audio transition speech), read
 * leniently from an unvalidated definition: what must be looked up before validating it.
 */
export const definitionRecordingIds = (definition: unknown): ReadonlySet<string> =>
  new Set([
    ...list(record(definition)["nodes"]).flatMap((node) =>
      named(record(record(node)["data"])["greeting_recording_id"])
    ),
    ...list(record(definition)["edges"]).flatMap((edge) =>
      named(record(record(edge)["data"])["transition_speech_recording_id"])
    )
  ])

/** The recording a run's greeting override plays, from a contact row (`greeting_override`) or the CSV columns. */
export const overrideRecordingId = (context: Readonly<Record<string, unknown>>): string | null => {
  const override = record(context["greeting_override"])
  if (override["type"] === "audio" && typeof override["recording_id"] === "string") return override["recording_id"]
  if (context["greeting_override_type"] === "audio" && typeof context["greeting_override_recording_id"] === "string") {
    return context["greeting_override_recording_id"]
  }
  return null
}

/** The clips a run of `graph` with `context` may play. */
export const runRecordingIds = (
  graph: WorkflowGraph,
  context: Readonly<Record<string, unknown>>
): ReadonlySet<string> => {
  const override = overrideRecordingId(context)
  return new Set([...definitionRecordingIds(graph), ...(override === null ? [] : [override])])
}

/** What a text channel shows in place of a clip: its transcript, else its label. */
export const spokenTextOf = (recording: { readonly transcript: string | null; readonly label: string }) =>
  recording.transcript !== null && recording.transcript.trim() !== "" ? recording.transcript.trim() : recording.label
