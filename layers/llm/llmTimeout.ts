import { Config, Effect } from "effect"
import { InvalidConfiguration } from "../../services/AppConfig.ts"

/**
 * `TALKGRAPH_LLM_TIMEOUT_SECONDS` (default 60, 1–600): the bound on one request to an
 * organization's LLM, so a slow or silent endpoint can never hold a caller indefinitely.
 */
export const llmTimeoutSeconds = Config.integer("TALKGRAPH_LLM_TIMEOUT_SECONDS").pipe(
  Config.validate({ message: "must be between 1 and 600", validation: (seconds) => seconds >= 1 && seconds <= 600 }),
  Config.withDefault(60),
  Effect.mapError((error) => new InvalidConfiguration({ message: `Invalid configuration: ${String(error)}` }))
)
