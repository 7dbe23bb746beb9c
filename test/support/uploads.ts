import type { Credentials } from "./client.ts"
import type { Client } from "./client.ts"
import { ensureVoiceModels } from "./voiceFixtures.ts"

/** Gets an upload URL and PUTs the CSV there, as a client of the API does; returns the s3_key. */
export const uploadCsv = async (api: Client, credentials: Credentials, csv: string | Uint8Array): Promise<string> => {
  const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, credentials)
  if (grant.status !== 200) throw new Error(`presign failed: ${grant.status} ${JSON.stringify(grant.body)}`)
  const put = await fetch(grant.body.upload_url, { method: "PUT", headers: { "content-type": "text/csv" }, body: csv })
  if (!put.ok) throw new Error(`upload failed: ${put.status} ${await put.text()}`)
  return grant.body.s3_key
}

/** A Twilio configuration with one caller number, and model settings: what a campaign needs to start. */
export const newTelephony = async (
  api: Client,
  credentials: Credentials,
  options: { name?: string; isDefault?: boolean } = {}
) => {
  await ensureVoiceModels(api, credentials)
  const created = await api.post(
    "/api/v1/organizations/telephony-configs",
    {
      name: options.name ?? "Twilio main",
      is_default_outbound: options.isDefault ?? true,
      // A closed loopback port: a campaign that does dial fails fast and never reaches the internet.
      config: {
        provider: "twilio",
        account_sid: "AC0123456789abcdef",
        auth_token: "secret-auth-token-123456",
        amd_enabled: false,
        api_base_url: "http://127.0.0.1:9"
      }
    },
    credentials
  )
  if (created.status !== 200) {
    throw new Error(`telephony config failed: ${created.status} ${JSON.stringify(created.body)}`)
  }
  const number = await api.post(`/api/v1/organizations/telephony-configs/${created.body.id}/phone-numbers`, {
    address: `+1415555${String(Math.floor(Math.random() * 9000) + 1000)}`,
    is_default_caller_id: true
  }, credentials)
  if (number.status !== 200) throw new Error(`phone number failed: ${number.status} ${JSON.stringify(number.body)}`)
  return created.body.id as number
}

/**
 * A calling window that is closed now and for days to come (one minute, three days from today), so
 * a started campaign stays running with its contacts pending: for tests of the lifecycle, not of dialing.
 */
export const closedWindow = () => ({
  enabled: true,
  timezone: "UTC",
  slots: [{ day_of_week: (new Date().getUTCDay() + 6 + 3) % 7, start_time: "03:00", end_time: "03:01" }]
})
