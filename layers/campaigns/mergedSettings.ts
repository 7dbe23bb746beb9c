import { Effect, Either, ParseResult } from "effect"
import type { CampaignSettingsInput } from "../../services/Campaigns.ts"
import { callerIdPoolOf } from "../../src/campaigns/callerIdPool.ts"
import {
  circuitBreakerDefaults,
  mergeCircuitBreaker,
  mergeRateLimit,
  mergeRetry,
  mergeSchedule,
  rateLimitDefault,
  retryDefaults,
  type ScheduleConfig,
  validateSchedule
} from "../../src/campaigns/campaignSettings.ts"
import { campaignVoicemailProblems } from "../../src/campaigns/campaignVoicemail.ts"
import { ValidationFailed } from "../../src/domain/errors.ts"
import type { CampaignRow } from "./campaignRows.ts"

const scheduleOrFail = (schedule: ScheduleConfig | null) => {
  if (schedule === null) return Effect.succeed(null)
  const checked = validateSchedule(schedule)
  if (Either.isRight(checked)) return Effect.succeed(checked.right)
  const problems = ParseResult.ArrayFormatter.formatErrorSync(checked.left).map((issue) => ({
    loc: [
      "body",
      "schedule_config",
      ...issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)))
    ],
    msg: issue.message,
    type: "value_error"
  }))
  return Effect.fail(new ValidationFailed({ message: "Invalid schedule_config", problems }))
}

/** A requested voicemail policy the agent's rules refuse, as a 422 naming each field. */
const voicemailOrFail = (input: CampaignSettingsInput) => {
  const problems = campaignVoicemailProblems(input.voicemail)
  return problems.length === 0
    ? Effect.void
    : Effect.fail(new ValidationFailed({ message: "Invalid voicemail", problems }))
}

/** The settings a request leaves a campaign with (a new one without `current`), every rule checked on the result. */
export const mergedSettings = (current: CampaignRow | undefined, input: CampaignSettingsInput) =>
  Effect.gen(function*() {
    yield* voicemailOrFail(input)
    return {
      retry_config: mergeRetry(current?.retry_config ?? retryDefaults, input.retry_config),
      circuit_breaker: mergeCircuitBreaker(current?.circuit_breaker ?? circuitBreakerDefaults, input.circuit_breaker),
      schedule_config: yield* scheduleOrFail(mergeSchedule(current?.schedule_config ?? null, input.schedule_config)),
      calling_hours: input.calling_hours === undefined ? current?.calling_hours ?? null : input.calling_hours,
      caller_id_pool: input.caller_id_pool === undefined
        ? current?.caller_id_pool ?? null
        : input.caller_id_pool && callerIdPoolOf(input.caller_id_pool),
      voicemail: input.voicemail === undefined ? current?.voicemail ?? null : input.voicemail,
      max_concurrency: input.max_concurrency === undefined ? current?.max_concurrency ?? null : input.max_concurrency,
      rate_limit_per_second: mergeRateLimit(
        current?.rate_limit_per_second ?? rateLimitDefault,
        input.rate_limit_per_second
      )
    }
  })
