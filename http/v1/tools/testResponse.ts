import type { ToolOutcome } from "../../../src/tools/toolRun.ts"

/** A test run as Dograh's ToolTestResponse shows it. */
export const testResponse = (outcome: ToolOutcome) => ({
  status: outcome.status,
  status_code: outcome.status_code,
  data: outcome.data,
  error: outcome.status === "error" ? outcome.result.replace(/^Error: /, "") : null,
  result: outcome.result,
  truncated: outcome.truncated,
  request_method: outcome.request?.method ?? null,
  request_url: outcome.request?.url ?? null,
  request_headers: { ...(outcome.request?.headers ?? {}) },
  request_body: outcome.request?.body ?? null,
  duration_ms: outcome.latency_ms
})
