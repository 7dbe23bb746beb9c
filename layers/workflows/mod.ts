import { Layer } from "effect"
import { ModelSettingsLive } from "../llm/modelSettings.ts"
import { LlmGeneratorLive } from "../llm/openAiGenerator.ts"
import { WorkflowRepoLive } from "./workflowRepo.ts"
import { WorkflowsLive } from "./workflows.ts"

/** Workflows over their repository, with what they need (model settings, the LLM generator), all four exposed. */
export const AgentsLive = WorkflowsLive.pipe(
  Layer.provideMerge(Layer.mergeAll(WorkflowRepoLive, ModelSettingsLive, LlmGeneratorLive))
)
