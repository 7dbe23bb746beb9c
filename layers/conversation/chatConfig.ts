import { Config, Effect } from "effect"
import { InvalidConfiguration } from "../../services/AppConfig.ts"

/**
 * `TALKGRAPH_CHAT_IDLE_TIMEOUT_SECONDS` (default 1800, 1–86400): a chat with no message for this
 * long ends (`idle_timeout`); a workflow's `text_chat_inactivity_timeout_seconds` overrides it.
 */
export const chatIdleTimeoutSeconds = Config.integer("TALKGRAPH_CHAT_IDLE_TIMEOUT_SECONDS").pipe(
  Config.validate({
    message: "must be between 1 and 86400",
    validation: (seconds) => seconds >= 1 && seconds <= 86_400
  }),
  Config.withDefault(1800),
  Effect.mapError((error) => new InvalidConfiguration({ message: `Invalid configuration: ${String(error)}` }))
)
