import type { components } from "../api/schema.ts"

type Schemas = components["schemas"]

/**
 * The settings a campaign gets when the request leaves them out, as the API documents them (README
 * "Campaigns"; src/campaigns/campaignSettings.ts, which test/consoleCampaignDefaults.test.ts checks
 * these against). The wizard starts from them so what is shown is what the server would do.
 */
export const retryDefaults: Schemas["RetryConfigResponse"] = {
  enabled: true,
  max_retries: 2,
  retry_delay_seconds: 120,
  retry_on_busy: true,
  retry_on_no_answer: true,
  retry_on_voicemail: false
}

export const circuitBreakerDefaults: Schemas["CircuitBreakerConfigResponse"] = {
  enabled: true,
  failure_threshold: 0.5,
  window_seconds: 120,
  min_calls_in_window: 5
}

export const rateLimitDefault = 1

export const weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const
