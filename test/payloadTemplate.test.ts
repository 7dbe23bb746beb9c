import { describe, expect, it } from "vitest"
import { renderPayloadTemplate, webhookNodeBody } from "../src/webhooks/payloadTemplate.ts"

const now = new Date("2026-01-31T23:30:00Z")
const context = {
  workflow_run_id: 7,
  initial_context: { first_name: "Ada" },
  gathered_context: { rsvp: "", party: { size: 3 }, call_disposition: "callback" },
  call_disposition: "interested"
}

describe("Dograh payload templates", () => {
  it("fill strings and keys at any depth, keeping non-strings, objects as JSON and missing values as empty", () => {
    expect(renderPayloadTemplate(
      {
        "id_{{workflow_run_id}}": "{{workflow_run_id}}",
        nested: { list: ["{{gathered_context.party}}", 1, false, null] },
        missing: "[{{gathered_context.none.deeper}}]",
        lines: "a\\nb"
      },
      context,
      now
    )).toEqual({
      id_7: "7",
      nested: { list: ["{\"size\":3}", 1, false, null] },
      missing: "[]",
      lines: "a\nb"
    })
  })

  it("give a fallback for a missing or empty value, in both of Dograh's spellings", () => {
    expect(renderPayloadTemplate(
      ["{{gathered_context.rsvp | no answer}}", "{{ nope | fallback:none }}", "{{first_name_x | fallback}}"],
      context,
      now
    )).toEqual(["no answer", "none", "First_Name_X"])
  })

  it("read initial_context.<key> from the top level too, and know the send time", () => {
    expect(renderPayloadTemplate("{{initial_context.workflow_run_id}}", context, now)).toBe("7")
    expect(renderPayloadTemplate("{{current_time}} {{current_weekday}}", context, now)).toBe(
      "2026-01-31 23:30:00 UTC Saturday"
    )
    // The weekday follows the zone of a current_time_<zone> beside it.
    expect(renderPayloadTemplate("{{current_time_Asia/Tokyo}} {{current_weekday}}", context, now)).toMatch(
      /^2026-02-01 08:30:00 \S+ Sunday$/
    )
  })

  it("always carry call_disposition, unless the template sets it", () => {
    expect(webhookNodeBody(undefined, context, now)).toEqual({ call_disposition: "interested" })
    expect(webhookNodeBody({ call_disposition: "x" }, context, now)).toEqual({ call_disposition: "x" })
  })
})
