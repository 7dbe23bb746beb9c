import { referencesIn } from "../graph/templateVariables.ts"
import {
  builtInVariables,
  field,
  GREETING_RECORDING,
  GREETING_TEXT,
  GREETING_TYPE,
  type Header,
  quoted
} from "./contactsHeader.ts"
import type { RowProblems } from "./rowProblems.ts"

/** Per-row replacement of the Start node's greeting (spec "Contacts CSV"). */
export type GreetingOverride =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "audio"; readonly recording_id: string }

/** A row's greeting override, or none; what is wrong with it goes to `problems`. */
export const greetingOf = (
  fields: ReadonlyArray<string>,
  header: Header,
  columns: ReadonlySet<string>,
  row: number,
  problems: RowProblems,
  recordingIds?: ReadonlySet<string>
): GreetingOverride | null => {
  const type = field(fields, header.greetingType).toLowerCase()
  const text = field(fields, header.greetingText)
  const recording = field(fields, header.greetingRecording)
  if (type === "" && text === "" && recording === "") return null
  if (type === "text") {
    if (text === "") {
      problems.add(`${GREETING_TEXT} is empty while ${GREETING_TYPE} is "text"`, row)
      return null
    }
    for (const reference of referencesIn(text)) {
      const name = reference.name.split(".")[0]!
      if (reference.fallback === undefined && !columns.has(name) && !builtInVariables.has(name)) {
        problems.add(
          `${GREETING_TEXT} references {{${name.length > 40 ? `${name.slice(0, 40)}…` : name}}}, which is not a column`,
          row
        )
      }
    }
    return { type: "text", text }
  }
  if (type === "audio") {
    if (recording === "") {
      problems.add(`${GREETING_RECORDING} is empty while ${GREETING_TYPE} is "audio"`, row)
      return null
    }
    if (recordingIds && !recordingIds.has(recording)) {
      problems.add(`${GREETING_RECORDING} ${quoted(recording)} is not a recording of this organization`, row)
      return null
    }
    return { type: "audio", recording_id: recording }
  }
  problems.add(
    type === ""
      ? `${GREETING_TYPE} is empty while another greeting override column is filled (use "text" or "audio")`
      : `${GREETING_TYPE} must be "text" or "audio"`,
    row
  )
  return null
}
