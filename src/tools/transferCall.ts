import { renderTemplate } from "../graph/templateVariables.ts"
import type { TransferCallConfig } from "./callToolConfigs.ts"
import { parametersSchema } from "./toolArguments.ts"
import type { ToolParameter } from "./toolDefinition.ts"
import { DESTINATION_RULE, type TransferEndpoint, transferEndpointOf } from "./transferDestination.ts"

/** Dograh's default ring time for a transfer, in seconds. */
export const DEFAULT_TRANSFER_TIMEOUT_SECONDS = 30
/** Dograh's default wait for a transfer resolver's answer. */
export const DEFAULT_RESOLVER_TIMEOUT_MS = 3000

/** The resolver's parameters the model fills in (Dograh: required unless said otherwise), when the destination is resolved. */
export const resolverParameters = (config: TransferCallConfig): ReadonlyArray<ToolParameter> =>
  config.destination_source === "dynamic"
    ? (config.resolver?.parameters ?? []).map((parameter) => ({ ...parameter, required: parameter.required ?? true }))
    : []

/**
 * What the model is offered: the resolver's parameters for a resolved destination, else the
 * destinations' names to choose from when the config lists several.
 */
export const transferParameters = (config: TransferCallConfig): Record<string, unknown> => {
  if (config.destination_source === "dynamic") return parametersSchema(resolverParameters(config))
  const listed = config.destinations ?? []
  if (listed.length < 2) return { type: "object", properties: {}, additionalProperties: false }
  return {
    type: "object",
    properties: {
      destination: {
        type: "string",
        enum: listed.map((entry) => entry.name),
        description: "Who to transfer the caller to: " +
          listed.map((entry) => entry.description ? `${entry.name} (${entry.description})` : entry.name).join("; ")
      }
    },
    required: ["destination"],
    additionalProperties: false
  }
}

/** The value at a dotted `path` of the context (`customer.region`). */
const valueAt = (context: Readonly<Record<string, unknown>>, path: string): unknown =>
  path.split(".").reduce<unknown>(
    (value, key) => value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined,
    context
  )

export interface ChosenDestination {
  /** The destination's name in the config, or the endpoint itself when it has none. */
  readonly name: string
  readonly endpoint: TransferEndpoint
}

/**
 * Where this call of the tool transfers to: the listed destination the model named (or the only
 * one), the static `destination` (its placeholders filled from `variables`), or the context
 * mapping's route for the context's value (else its fallback). An `error` is told to the model.
 * A `dynamic` source is asked of its resolver instead (`resolvedDestination`).
 */
export const chosenDestination = (
  config: TransferCallConfig,
  args: Readonly<Record<string, unknown>>,
  variables: Readonly<Record<string, unknown>>
): ChosenDestination | { readonly error: string } => {
  const endpointOf = (name: string, value: string): ChosenDestination | { readonly error: string } => {
    const rendered = renderTemplate(value, variables).trim()
    const endpoint = transferEndpointOf(rendered)
    return endpoint === null
      ? { error: `the destination "${rendered}" ${DESTINATION_RULE}` }
      : { name, endpoint }
  }
  const listed = config.destinations ?? []
  if (listed.length === 1) return endpointOf(listed[0]!.name, listed[0]!.destination)
  if (listed.length > 1) {
    const asked = typeof args["destination"] === "string" ? args["destination"].trim().toLowerCase() : ""
    const entry = listed.find((candidate) => candidate.name.toLowerCase() === asked)
    return entry === undefined
      ? { error: `"destination" must be one of: ${listed.map((candidate) => candidate.name).join(", ")}` }
      : endpointOf(entry.name, entry.destination)
  }
  if (config.destination_source === "context_mapping" && config.context_mapping) {
    for (const rule of config.context_mapping.rules) {
      const value = valueAt(variables, rule.context_path)
      if (value === undefined || value === null) continue
      const wanted = String(value).trim().toLowerCase()
      const route = rule.routes.find((candidate) => candidate.context_value.trim().toLowerCase() === wanted)
      if (route) return endpointOf(route.destination, route.destination)
    }
    const fallback = config.context_mapping.fallback_destination
    return fallback ? endpointOf(fallback, fallback) : { error: "no destination matches this conversation" }
  }
  return config.destination
    ? endpointOf(config.destination, config.destination)
    : { error: "the tool has no destination" }
}

/**
 * The destination a resolver answered, Dograh's shape: `{"transfer_context": {"destination": "+1…"}}`.
 * Anything else (another shape, a value no carrier dials) is an `error` for the model.
 */
export const resolvedDestination = (answer: unknown): ChosenDestination | { readonly error: string } => {
  const context = answer !== null && typeof answer === "object"
    ? (answer as Record<string, unknown>)["transfer_context"]
    : undefined
  const destination = context !== null && typeof context === "object"
    ? (context as Record<string, unknown>)["destination"]
    : undefined
  if (typeof destination !== "string" || destination.trim() === "") {
    return { error: "the transfer resolver answered no transfer_context.destination" }
  }
  const endpoint = transferEndpointOf(destination)
  return endpoint === null
    ? { error: `the transfer resolver answered the destination "${destination.trim()}", which ${DESTINATION_RULE}` }
    : { name: destination.trim(), endpoint }
}
