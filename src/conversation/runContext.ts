import type { StartCallData } from "../graph/definition.ts"
import { renderTemplate } from "../graph/templateVariables.ts"
import { overrideRecordingId } from "../recordings/recordingReferences.ts"

export type Context = Readonly<Record<string, unknown>>

/** The values `{{variables}}` render from: the workflow's template defaults under the run's own context. */
export const runContext = (templateDefaults: Context | null, initialContext: Context): Context => ({
  ...(templateDefaults ?? {}),
  ...initialContext
})

const textOverride = (context: Context): string | null => {
  const override = context["greeting_override"]
  if (typeof override === "string") return override
  if (override !== null && typeof override === "object") {
    const { type, text } = override as Record<string, unknown>
    if ((type === undefined || type === "text") && typeof text === "string") return text
  }
  // The contacts-CSV form (spec "Contacts CSV"): used when the type is text.
  if (context["greeting_override_type"] === "text" && typeof context["greeting_override_text"] === "string") {
    return context["greeting_override_text"]
  }
  return null
}

/**
 * The opening line: the run's text override when it has one, else the start node's greeting,
 * rendered; `null` when there is neither (the model then opens the conversation). A recorded clip
 * (an audio override or an audio greeting) cannot be played in text: it reads as its text in
 * `recordingTexts` (transcript, else label), and without one falls back the same way.
 */
export const greetingFor = (
  start: StartCallData,
  context: Context,
  recordingTexts?: ReadonlyMap<string, string>
): string | null => {
  const override = textOverride(context)
  const overrideClip = overrideRecordingId(context)
  const clipText = overrideClip === null ? undefined : recordingTexts?.get(overrideClip)
  if ((override === null || override.trim() === "") && clipText) return clipText
  if ((override === null || override.trim() === "") && start.greeting_type === "audio") {
    return (start.greeting_recording_id && recordingTexts?.get(start.greeting_recording_id)) || null
  }
  const template = override !== null && override.trim() !== ""
    ? override
    : start.greeting ?? null
  if (template === null) return null
  const rendered = renderTemplate(template, context).trim()
  return rendered === "" ? null : rendered
}
