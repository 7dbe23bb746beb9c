import type { TransferCallConfig } from "./callToolConfigs.ts"

/**
 * Where a cold transfer may send the caller: an E.164 number (`+` and 8–15 digits) or a SIP URI
 * (`sip:user@host`, optionally `sips:` and `;params`), the two endpoint kinds every carrier's
 * transfer takes. A value wholly made of `{{variable}}` placeholders is a template, checked once
 * it is filled in at run time.
 */
const E164 = /^\+[1-9][0-9]{7,14}$/
const SIP_URI = /^sips?:[^@\s:;]+@[A-Za-z0-9.-]+(:[0-9]{1,5})?(;[^\s]*)?$/i
const TEMPLATE = /\{\{[^}]*\}\}/

export type TransferEndpoint =
  | { readonly kind: "number"; readonly number: string }
  | { readonly kind: "sip"; readonly uri: string }

export const isTemplate = (value: string): boolean => TEMPLATE.test(value)

/** The endpoint `value` names, or null when it is neither an E.164 number nor a SIP URI. */
export const transferEndpointOf = (value: string): TransferEndpoint | null => {
  const trimmed = value.trim()
  if (E164.test(trimmed)) return { kind: "number", number: trimmed }
  if (SIP_URI.test(trimmed)) return { kind: "sip", uri: trimmed }
  return null
}

export const DESTINATION_RULE = "must be an E.164 number (+ and 8 to 15 digits) or a SIP URI (sip:user@host)"

/** Every destination a transfer_call config names, with where it sits in the config (for a 422's `loc`). */
export const destinationsOf = (
  config: TransferCallConfig
): ReadonlyArray<{ readonly loc: ReadonlyArray<string | number>; readonly value: string }> => {
  const found: Array<{ loc: ReadonlyArray<string | number>; value: string }> = []
  if (config.destination !== undefined && config.destination.trim() !== "") {
    found.push({ loc: ["destination"], value: config.destination })
  }
  config.destinations?.forEach((entry, index) =>
    found.push({ loc: ["destinations", index, "destination"], value: entry.destination })
  )
  config.context_mapping?.rules.forEach((rule, ruleIndex) =>
    rule.routes.forEach((route, routeIndex) =>
      found.push({
        loc: ["context_mapping", "rules", ruleIndex, "routes", routeIndex, "destination"],
        value: route.destination
      })
    )
  )
  const fallback = config.context_mapping?.fallback_destination
  if (fallback) found.push({ loc: ["context_mapping", "fallback_destination"], value: fallback })
  return found
}

/** Problems of a config's destinations: each literal one must be an endpoint a carrier can dial. */
export const destinationProblems = (
  config: TransferCallConfig
): ReadonlyArray<{ readonly loc: ReadonlyArray<string | number>; readonly msg: string }> =>
  destinationsOf(config)
    .filter(({ value }) => !isTemplate(value) && transferEndpointOf(value) === null)
    .map(({ loc, value }) => ({ loc, msg: `"${value}" ${DESTINATION_RULE}` }))
