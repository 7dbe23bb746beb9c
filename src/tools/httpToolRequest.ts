import { renderTemplate, renderTemplateWith, soleReferenceValue } from "../graph/templateVariables.ts"
import { FORBIDDEN_HEADERS } from "./credentialRecord.ts"
import type { HttpApiConfig, ParameterType, PresetParameter } from "./toolDefinition.ts"

/** The values templates see in a conversation: its variables at the top level, and Dograh's two namespaces. */
export const toolVariables = (
  context: Readonly<Record<string, unknown>>,
  extracted: Readonly<Record<string, unknown>>
): Readonly<Record<string, unknown>> => ({
  ...context,
  ...extracted,
  initial_context: context,
  gathered_context: extracted
})

/**
 * Why a tool's URL template cannot be used, or null. The scheme, host and port must be written
 * out: a placeholder there would let the model (or a contact's field) choose where the request,
 * and the credential on it, goes. Placeholders may stand in the path and the query.
 */
export const urlTemplateProblem = (url: string): string | null => {
  const authorityEnd = url.indexOf("/", url.indexOf("//") + 2)
  const origin = authorityEnd < 0 ? url : url.slice(0, authorityEnd)
  if (origin.includes("{{") || url.indexOf("//") < 0) {
    return "the scheme and host must be written out (https://api.example.com/...); placeholders may only stand in the path and the query"
  }
  let parsed: URL
  try {
    parsed = new URL(url.replace(/\{\{[^}]*\}\}/g, "x"))
  } catch {
    return "must be an absolute http(s) URL, e.g. https://api.example.com/orders/{{order_id}}"
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "must be an http(s) URL"
  if (parsed.username !== "" || parsed.password !== "") {
    return "must not carry credentials (user:password@); store them as a credential and set credential_uuid"
  }
  if (parsed.hash !== "") return "must not have a fragment"
  return null
}

/** The host (and port, when not the scheme's own) a tool's requests go to; null when the URL is unusable. */
export const hostOf = (url: string): string | null => {
  if (urlTemplateProblem(url) !== null) return null
  return new URL(url.replace(/\{\{[^}]*\}\}/g, "x")).host.toLowerCase()
}

export type PresetResolution =
  | { readonly _tag: "Resolved"; readonly values: Readonly<Record<string, unknown>> }
  | { readonly _tag: "Unresolved"; readonly problems: ReadonlyArray<string> }

const coerce = (type: ParameterType, text: string): { ok: true; value: unknown } | { ok: false } => {
  switch (type) {
    case "string":
      return { ok: true, value: text }
    case "number": {
      const value = Number(text)
      return text.trim() !== "" && Number.isFinite(value) ? { ok: true, value } : { ok: false }
    }
    case "boolean":
      return text === "true" ? { ok: true, value: true } : text === "false" ? { ok: true, value: false } : { ok: false }
    default:
      try {
        const value: unknown = JSON.parse(text)
        const matches = type === "array" ? Array.isArray(value) : value !== null && typeof value === "object"
        return matches ? { ok: true, value } : { ok: false }
      } catch {
        return { ok: false }
      }
  }
}

/** Preset parameters filled from the conversation's variables, each as its declared type. */
export const resolvePresets = (
  presets: ReadonlyArray<PresetParameter>,
  variables: Readonly<Record<string, unknown>>
): PresetResolution => {
  const values: Record<string, unknown> = {}
  const problems: Array<string> = []
  for (const preset of presets) {
    const whole = soleReferenceValue(preset.value_template, variables)
    const text = whole !== undefined && typeof whole !== "string"
      ? JSON.stringify(whole)
      : renderTemplate(preset.value_template, variables)
    if (text === "") {
      if (preset.required) problems.push(`preset "${preset.name}" has no value in this conversation`)
      continue
    }
    const coerced = coerce(preset.type, text)
    if (coerced.ok) values[preset.name] = coerced.value
    else problems.push(`preset "${preset.name}" is not a ${preset.type}`)
  }
  return problems.length > 0 ? { _tag: "Unresolved", problems } : { _tag: "Resolved", values }
}

/** A value that would climb the URL's path (`.` or `..`, which URLs resolve even encoded) instead of filling a segment. */
export class UnsafeUrlValue extends Error {}

const urlPiece = (piece: string): string => {
  if (/^(\.|%2e){1,2}$/i.test(piece.trim())) throw new UnsafeUrlValue(`"${piece}" cannot stand in a URL path`)
  return encodeURIComponent(piece)
}

/** A request as built from a tool's definition, before credentials are put on it. */
export interface ToolHttpRequest {
  readonly method: HttpApiConfig["method"]
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** The JSON body sent, for POST, PUT and PATCH. */
  readonly body: unknown
}

const referencedNames = (text: string) =>
  new Set([...text.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1]!))

/** A body template's values rendered: a string that is one placeholder keeps its value's JSON type. */
const renderBody = (template: unknown, values: Readonly<Record<string, unknown>>): unknown => {
  if (typeof template === "string") {
    const whole = soleReferenceValue(template, values)
    return whole !== undefined ? whole : renderTemplate(template, values)
  }
  if (Array.isArray(template)) return template.map((item) => renderBody(item, values))
  if (template !== null && typeof template === "object") {
    return Object.fromEntries(Object.entries(template).map(([key, item]) => [key, renderBody(item, values)]))
  }
  return template
}

/**
 * The request a call makes: placeholders in the URL take the arguments and presets (then the
 * conversation's variables), URL-encoded; what the URL does not use goes in the query string (GET,
 * DELETE) or the JSON body (POST, PUT, PATCH: `body_template` when given, else a flat object).
 * Static headers may use the conversation's variables. Throws `UnsafeUrlValue` for a value that
 * would move the request to another path of the host (and its credential with it).
 */
export const buildToolRequest = (
  config: HttpApiConfig,
  values: Readonly<Record<string, unknown>>,
  variables: Readonly<Record<string, unknown>>
): ToolHttpRequest => {
  const scope = { ...variables, ...values }
  const url = new URL(renderTemplateWith(config.url, scope, urlPiece))
  const usedInUrl = referencedNames(config.url)
  const rest = Object.entries(values).filter(([name]) => !usedInUrl.has(name))
  const sendsBody = config.method === "POST" || config.method === "PUT" || config.method === "PATCH"
  let body: unknown = undefined
  if (sendsBody) {
    if (config.body_template) {
      body = renderBody(config.body_template, scope)
    } else body = Object.fromEntries(rest)
  } else {
    for (const [name, value] of rest) {
      url.searchParams.append(name, typeof value === "string" ? value : JSON.stringify(value))
    }
  }
  const headers: Record<string, string> = { accept: "application/json" }
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    if (FORBIDDEN_HEADERS.has(name.toLowerCase())) continue
    headers[name] = renderTemplate(value, variables)
  }
  if (sendsBody) headers["content-type"] = "application/json"
  return { method: config.method, url: url.href, headers, body }
}
