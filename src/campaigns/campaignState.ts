import { Schema } from "effect"

/**
 * The campaign lifecycle, in one place (docs/architecture.md, "Campaigns"):
 * `created → running ⇄ paused → completed | cancelled | failed`.
 * Users drive start/pause/resume/cancel; the dialer drives complete and fail.
 */
export const CampaignState = Schema.Literal("created", "running", "paused", "completed", "cancelled", "failed")
export type CampaignState = typeof CampaignState.Type

export type CampaignCommand = "start" | "pause" | "resume" | "cancel" | "complete" | "fail"

interface Transition {
  readonly from: ReadonlyArray<CampaignState>
  readonly to: CampaignState
  /** The `event` written to the campaign's logs. */
  readonly event: string
}

export const transitions: Readonly<Record<CampaignCommand, Transition>> = {
  start: { from: ["created"], to: "running", event: "campaign_started" },
  pause: { from: ["running"], to: "paused", event: "campaign_paused" },
  resume: { from: ["paused"], to: "running", event: "campaign_resumed" },
  cancel: { from: ["created", "running", "paused"], to: "cancelled", event: "campaign_cancelled" },
  complete: { from: ["running"], to: "completed", event: "campaign_completed" },
  fail: { from: ["created", "running", "paused"], to: "failed", event: "campaign_failed" }
}

export const finalStates: ReadonlyArray<CampaignState> = ["completed", "cancelled", "failed"]

export const isFinal = (state: CampaignState) => finalStates.includes(state)

/** Settings may change only while nothing is being dialled under them. */
export const editableStates: ReadonlyArray<CampaignState> = ["created", "paused"]

export const canApply = (command: CampaignCommand, state: CampaignState) => transitions[command].from.includes(state)

/** The 409 message for a command the current state does not allow. */
export const refusal = (command: CampaignCommand, state: CampaignState) =>
  `Cannot ${command} a campaign that is ${state}; ${command} is allowed only when it is ${
    transitions[command].from.join(" or ")
  }`

/** The next state, or the reason the command is refused. */
export const apply = (
  command: CampaignCommand,
  state: CampaignState
): { readonly ok: true; readonly to: CampaignState } | { readonly ok: false; readonly message: string } =>
  canApply(command, state) ? { ok: true, to: transitions[command].to } : { ok: false, message: refusal(command, state) }
