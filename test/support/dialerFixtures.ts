import type { CarrierStandIn } from "./carrierStandIns.ts"
import type { Client, Credentials } from "./client.ts"
import type { RunningServer } from "./server.ts"
import { uploadCsv } from "./uploads.ts"
import { ensureVoiceModels } from "./voiceFixtures.ts"
import { insertWorkflow } from "./workflowRows.ts"

/** A telephony configuration pointed at a loopback carrier (any of the four), with one caller number. */
export const carrierTelephony = async (
  api: Client,
  credentials: Credentials,
  carrier: Pick<CarrierStandIn, "telephonyConfig">,
  options: { readonly machineDetection?: boolean } = {}
) => {
  const created = await api.post("/api/v1/organizations/telephony-configs", {
    name: `Loopback ${Math.random().toString(36).slice(2, 8)}`,
    is_default_outbound: true,
    config: carrier.telephonyConfig({ machineDetection: options.machineDetection ?? false })
  }, credentials)
  if (created.status !== 200) {
    throw new Error(`telephony config failed: ${created.status} ${JSON.stringify(created.body)}`)
  }
  const number = await api.post(`/api/v1/organizations/telephony-configs/${created.body.id}/phone-numbers`, {
    address: `+1415555${String(Math.floor(Math.random() * 9000) + 1000)}`,
    is_default_caller_id: true
  }, credentials)
  if (number.status !== 200) throw new Error(`phone number failed: ${number.status} ${JSON.stringify(number.body)}`)
  return { id: created.body.id as number, callerNumber: number.body.address as string }
}

/** `count` distinct numbers in a CSV (first_name filled), numbered from `first`. */
export const contactsCsv = (numbers: ReadonlyArray<string>) =>
  `phone_number,first_name\n${numbers.map((number, index) => `${number},Person ${index + 1}`).join("\n")}\n`

export const numbersFrom = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${prefix}${String(index + 1).padStart(4, "0")}`)

/** Uploads the CSV, creates the campaign with the given settings and starts it; returns its id. */
export const startedCampaign = async (
  server: RunningServer,
  api: Client,
  account: { readonly token: string; readonly organizationId: number },
  csv: string,
  settings: Record<string, unknown> = {},
  start = true
) => {
  const workflowId = await insertWorkflow(server, account.organizationId, { variables: ["first_name"] })
  const sourceId = await uploadCsv(api, { token: account.token }, csv)
  const created = await api.post("/api/v1/campaign/create", {
    name: "Dialer test",
    workflow_id: workflowId,
    source_type: "csv",
    source_id: sourceId,
    ...settings
  }, { token: account.token })
  if (created.status !== 200) {
    throw new Error(`campaign create failed: ${created.status} ${JSON.stringify(created.body)}`)
  }
  if (start) {
    await ensureVoiceModels(api, { token: account.token })
    const started = await api.post(`/api/v1/campaign/${created.body.id}/start`, undefined, { token: account.token })
    if (started.status !== 200) {
      throw new Error(`campaign start failed: ${started.status} ${JSON.stringify(started.body)}`)
    }
  }
  return created.body.id as number
}

/** Polls until `check` returns a value (not undefined/false), or fails with the last value seen. */
export const eventually = async <T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
  label = "condition"
): Promise<T> => {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    last = value
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${label} not reached within ${timeoutMs} ms (last: ${JSON.stringify(last)})`)
}
