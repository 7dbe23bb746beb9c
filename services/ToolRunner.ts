import { Context, type Effect } from "effect"
import type { OrganizationId } from "../src/domain/ids.ts"
import type { RunnableTool, ToolOutcome } from "../src/tools/toolRun.ts"
import type { ChosenDestination } from "../src/tools/transferCall.ts"

export interface ToolCallInput {
  readonly organizationId: OrganizationId
  readonly tool: RunnableTool
  /** The model's arguments as it wrote them (JSON text), checked against the tool's parameters. */
  readonly arguments: string
  /** The conversation's variables, for presets and templates. */
  readonly variables: Readonly<Record<string, unknown>>
  /** A test run's preset values, used in place of resolving the presets' templates. */
  readonly presetValues?: Readonly<Record<string, unknown>> | undefined
}

/**
 * Runs one call of a library tool (HTTP API, calculator, current time). It never fails: every
 * failure (bad arguments, a refused or unreachable host, a timeout, an error status) is an outcome
 * the model is told about, so it can answer the user.
 */
export interface ToolRunnerShape {
  readonly run: (input: ToolCallInput) => Effect.Effect<ToolOutcome>
  /**
   * A `dynamic` transfer_call's destination, asked of its resolver like an HTTP tool's request
   * (outbound policy, bound credential, timeout); an `error` (failure, timeout, no valid
   * destination) is told to the model.
   */
  readonly resolveTransfer: (
    input: ToolCallInput
  ) => Effect.Effect<ChosenDestination | { readonly error: string }>
}

export class ToolRunner extends Context.Tag("talkgraph/ToolRunner")<ToolRunner, ToolRunnerShape>() {}
