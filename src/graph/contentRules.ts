import { dotted, type Path, record } from "./decodeIssues.ts"
import type { NodeEntry } from "./graphEntries.ts"
import { malformedReferences } from "./templateVariables.ts"

// Rules on what nodes and edges say: template references, extraction variables, recorded clips.

export const checkReferences = (value: unknown, path: Path, report: (field: Path, message: string) => void) => {
  if (typeof value === "string") {
    for (const bad of malformedReferences(value)) {
      report(
        path,
        `${dotted(path)} has a malformed template reference ${JSON.stringify(bad)}; use {{name}} or {{name | default}}`
      )
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => checkReferences(item, [...path, index], report))
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) checkReferences(item, [...path, key], report)
  }
}

export const checkExtraction = (node: NodeEntry, report: (field: Path, rule: string, message: string) => void) => {
  if (node.type === "globalNode") return
  const variables = Array.isArray(node.rawData["extraction_variables"]) ? node.rawData["extraction_variables"] : []
  if (node.rawData["extraction_enabled"] === true && variables.length === 0) {
    report(
      ["data", "extraction_variables"],
      "extraction_variables_missing",
      "extraction is enabled but no extraction_variables are defined"
    )
  }
  const seen = new Set<string>()
  variables.forEach((variable, index) => {
    const name = record(variable)["name"]
    if (typeof name !== "string") return
    if (seen.has(name)) {
      report(
        ["data", "extraction_variables", index, "name"],
        "extraction_variable_duplicate",
        `extraction variable "${name}" is defined twice`
      )
    }
    seen.add(name)
  })
}

export const checkGreeting = (
  node: NodeEntry,
  report: (field: Path, rule: string, message: string) => void,
  recordingIds?: ReadonlySet<string>
) => {
  if (node.type !== "startCall" || node.rawData["greeting_type"] !== "audio") return
  const recording = node.rawData["greeting_recording_id"]
  if (typeof recording !== "string" || recording.trim() === "") {
    report(
      ["data", "greeting_recording_id"],
      "greeting_recording_missing",
      "greeting_type is audio but greeting_recording_id is empty"
    )
  } else checkRecording(recording, ["data", "greeting_recording_id"], report, recordingIds)
}

export const checkTransitionSpeech = (
  data: Record<string, unknown>,
  report: (field: Path, rule: string, message: string) => void,
  recordingIds?: ReadonlySet<string>
) => {
  if (data["transition_speech_type"] !== "audio") return
  const recording = data["transition_speech_recording_id"]
  if (typeof recording !== "string" || recording.trim() === "") {
    report(
      ["data", "transition_speech_recording_id"],
      "transition_recording_missing",
      "transition_speech_type is audio but transition_speech_recording_id is empty"
    )
  } else checkRecording(recording, ["data", "transition_speech_recording_id"], report, recordingIds)
}

const checkRecording = (
  recording: string,
  field: Path,
  report: (field: Path, rule: string, message: string) => void,
  recordingIds?: ReadonlySet<string>
) => {
  if (recordingIds && !recordingIds.has(recording.trim())) {
    report(
      field,
      "recording_unknown",
      `${
        dotted(field)
      } "${recording}" is not a recording of this organization; upload it at /api/v1/workflow-recordings first`
    )
  }
}
