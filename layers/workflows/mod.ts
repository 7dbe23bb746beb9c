import { Layer } from "effect"
import { ModelSettingsLive } from "../llm/modelSettings.ts"
import { LlmGeneratorLive } from "../llm/openAiGenerator.ts"
import { WorkflowsLive } from "./workflows.ts"

/** Workflows with what they need (model settings, the LLM generator), all three exposed. */
export const AgentsLive = WorkflowsLive.pipe(Layer.provideMerge(Layer.merge(ModelSettingsLive, LlmGeneratorLive)))
