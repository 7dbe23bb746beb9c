import { describe, expect, it } from "vitest"
import { readContacts } from "../src/campaigns/csvContacts.ts"
import { greetingFor } from "../src/conversation/runContext.ts"
import type { StartCallData } from "../src/graph/definition.ts"
import { validateDefinition } from "../src/graph/validation.ts"
import { definitionRecordingIds, runRecordingIds, spokenTextOf } from "../src/recordings/recordingReferences.ts"
import { runnableDefinition } from "./support/workflowGraphs.ts"

const withClips = () => {
  const definition = runnableDefinition()
  Object.assign(definition.nodes[0]!.data, { greeting_type: "audio", greeting_recording_id: "hello" })
  Object.assign(definition.edges[1]!.data, { transition_speech_type: "audio", transition_speech_recording_id: "bye" })
  return definition
}

const readAll = async (csv: string, recordingIds?: ReadonlySet<string>) => {
  const source = (async function*() {
    yield csv
  })()
  const contacts = readContacts(source, { defaultRegion: undefined, requiredColumns: [], recordingIds })
  const rows = []
  for (let next = await contacts.next(); !next.done; next = await contacts.next()) rows.push(...next.value)
  return rows
}

describe("recording references in graphs", () => {
  it("lists every clip a definition names", () => {
    expect([...definitionRecordingIds(withClips())].sort()).toEqual(["bye", "hello"])
    expect(definitionRecordingIds({ nodes: "nonsense" })).toEqual(new Set())
  })

  it("reports each unknown clip at its node or edge when the known ids are given, and nothing without them", () => {
    expect(validateDefinition(withClips()).problems).toEqual([])
    expect(validateDefinition(withClips(), { recordingIds: new Set(["hello", "bye"]) }).problems).toEqual([])
    const { problems } = validateDefinition(withClips(), { recordingIds: new Set(["hello"]) })
    expect(problems).toEqual([
      expect.objectContaining({
        kind: "edge",
        id: "e2",
        field: "data.transition_speech_recording_id",
        rule: "recording_unknown",
        stage: "readiness"
      })
    ])
  })

  it("requires a clip when the speech type is audio", () => {
    const definition = runnableDefinition()
    Object.assign(definition.edges[0]!.data, { transition_speech_type: "audio" })
    expect(validateDefinition(definition).problems.map((problem) => problem.rule)).toEqual([
      "transition_recording_missing"
    ])
  })
})

describe("recording references in contact CSVs", () => {
  it("refuses rows whose audio override names an unknown clip, listing the rows", async () => {
    const csv =
      "phone_number,greeting_override_type,greeting_override_recording_id\n+14155550101,audio,hello\n+14155550102,audio,ghost\n+14155550103,audio,ghost\n"
    await expect(readAll(csv, new Set(["hello"]))).rejects.toThrow(
      /Rows 3, 4: greeting_override_recording_id "ghost" is not a recording of this organization/i
    )
    expect(await readAll(csv)).toHaveLength(3)
  })
})

describe("clips in text", () => {
  const start = {
    name: "Start",
    prompt: "Help.",
    greeting: "Hi {{name}}",
    greeting_type: "audio",
    greeting_recording_id: "hello"
  } as StartCallData
  const texts = new Map([["hello", "Hello from the clip"], ["promo", "Summer promo!"]])

  it("reads an audio greeting and an audio override as their clip's text", () => {
    expect(greetingFor(start, {}, texts)).toBe("Hello from the clip")
    expect(greetingFor(start, { greeting_override: { type: "audio", recording_id: "promo" } }, texts)).toBe(
      "Summer promo!"
    )
    expect(greetingFor(start, { greeting_override_type: "audio", greeting_override_recording_id: "promo" }, texts))
      .toBe("Summer promo!")
    expect(greetingFor(start, { greeting_override: "Typed {{name}}", name: "Ann" }, texts)).toBe("Typed Ann")
    expect(greetingFor(start, {}, new Map())).toBeNull()
  })

  it("prefers the transcript and falls back to the label", () => {
    expect(spokenTextOf({ transcript: " Hi there ", label: "Greeting" })).toBe("Hi there")
    expect(spokenTextOf({ transcript: "  ", label: "Greeting" })).toBe("Greeting")
    expect(spokenTextOf({ transcript: null, label: "Greeting" })).toBe("Greeting")
  })

  it("collects the clips a run may play", () => {
    const graph = validateDefinition(withClips()).graph!
    expect([...runRecordingIds(graph, { greeting_override: { type: "audio", recording_id: "promo" } })].sort()).toEqual(
      ["bye", "hello", "promo"]
    )
  })
})
