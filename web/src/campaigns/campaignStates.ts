import type { Schemas } from "../api/client.ts"

export type CampaignState = Schemas["CampaignResponse"]["state"]

/** Which commands the state allows (the server answers 409 otherwise; its words are shown then too). */
export const allowed = {
  start: (state: CampaignState) => state === "created",
  pause: (state: CampaignState) => state === "running",
  resume: (state: CampaignState) => state === "paused",
  cancel: (state: CampaignState) => state === "created" || state === "running" || state === "paused",
  redial: (state: CampaignState) => state === "completed" || state === "cancelled" || state === "failed"
}

export const formatDate = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "—")
