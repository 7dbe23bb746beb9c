import { Layer } from "effect"
import { ModelSettingsLive } from "../llm/modelSettings.ts"
import { CallsLive } from "./calls.ts"
import { ScheduledCallsLive } from "./scheduledCalls.ts"

/** Single calls, with the model settings their voice preflight reads. */
export const CallsAreaLive = CallsLive.pipe(Layer.provide(ModelSettingsLive))

/** The scheduled-call placer, in processes that dial (beside the campaign scheduler). */
export const ScheduledCallsAreaLive = ScheduledCallsLive.pipe(Layer.provide(ModelSettingsLive))
