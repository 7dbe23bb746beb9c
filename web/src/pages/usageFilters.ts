/**
 * The usage endpoints' `filters` parameter: a JSON array of `{attribute, type, value}` conditions
 * (README "Usage"). The form keeps plain strings; empty ones add no condition.
 */
export interface UsageFilterForm {
  readonly agentId: string
  readonly campaignId: string
  readonly callerNumber: string
  readonly calledNumber: string
  readonly dispositions: string
  readonly minSeconds: string
  readonly maxSeconds: string
  readonly direction: "" | "inbound" | "outbound"
  readonly channel: "" | "telephony" | "web" | "chat"
}

export const emptyFilters: UsageFilterForm = {
  agentId: "",
  campaignId: "",
  callerNumber: "",
  calledNumber: "",
  dispositions: "",
  minSeconds: "",
  maxSeconds: "",
  direction: "",
  channel: ""
}

export const filtersParameter = (form: UsageFilterForm): string | undefined => {
  const conditions: Array<{ attribute: string; type: string; value: Record<string, unknown> }> = []
  if (form.agentId) conditions.push({ attribute: "workflowId", type: "number", value: { value: Number(form.agentId) } })
  if (form.campaignId.trim()) {
    conditions.push({ attribute: "campaignId", type: "number", value: { value: form.campaignId.trim() } })
  }
  if (form.callerNumber.trim()) {
    conditions.push({ attribute: "callerNumber", type: "text", value: { value: form.callerNumber } })
  }
  if (form.calledNumber.trim()) {
    conditions.push({ attribute: "calledNumber", type: "text", value: { value: form.calledNumber } })
  }
  const codes = form.dispositions.split(",").map((code) => code.trim()).filter(Boolean)
  if (codes.length > 0) conditions.push({ attribute: "dispositionCode", type: "multiSelect", value: { codes } })
  if (form.minSeconds || form.maxSeconds) {
    conditions.push({
      attribute: "duration",
      type: "numberRange",
      value: { min: form.minSeconds || null, max: form.maxSeconds || null }
    })
  }
  if (form.direction) conditions.push({ attribute: "callDirection", type: "radio", value: { status: form.direction } })
  if (form.channel) conditions.push({ attribute: "callChannel", type: "radio", value: { status: form.channel } })
  return conditions.length > 0 ? JSON.stringify(conditions) : undefined
}

export const formatSeconds = (seconds: number) =>
  seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`
