import type { RetryConfig } from "./campaignSettings.ts"

/** The outcomes a carrier reports for a placed call. */
export const CallOutcomes = ["completed", "busy", "no-answer", "voicemail", "failed", "canceled"] as const
export type CallOutcome = (typeof CallOutcomes)[number]

type AfterOutcome =
  | { readonly kind: "retry"; readonly at: number }
  | { readonly kind: "done"; readonly succeeded: boolean }

const retriedBy = (config: RetryConfig, outcome: CallOutcome): boolean => {
  switch (outcome) {
    case "busy":
      return config.retry_on_busy
    case "no-answer":
      return config.retry_on_no_answer
    case "voicemail":
      return config.retry_on_voicemail
    default:
      return false
  }
}

/**
 * What happens to a contact after attempt `attemptNumber` ended with `outcome` at `now`: another
 * attempt after the delay while the configuration names the reason and retries remain, otherwise
 * the contact is done (succeeded only when the call completed).
 */
export const afterOutcome = (
  config: RetryConfig,
  outcome: CallOutcome,
  attemptNumber: number,
  now: number
): AfterOutcome => {
  if (outcome !== "completed" && config.enabled && retriedBy(config, outcome) && attemptNumber <= config.max_retries) {
    return { kind: "retry", at: now + config.retry_delay_seconds * 1000 }
  }
  return { kind: "done", succeeded: outcome === "completed" }
}

/**
 * When a contact whose call could not be placed is dialled again: a carrier that could not be
 * reached (or asked to slow down) is tried again like a busy line, after the delay while retries
 * remain; a call the carrier refused (bad number, account) is not. Null: the contact is done.
 */
export const retryAfterPlacementFailure = (
  config: RetryConfig,
  permanent: boolean,
  attemptNumber: number,
  now: number
): number | null =>
  !permanent && config.enabled && attemptNumber <= config.max_retries ? now + config.retry_delay_seconds * 1000 : null
