/**
 * Dograh's payload templates (api/utils/template_renderer.py): a JSON value whose strings (keys
 * too) hold `{{ path }}` placeholders over a run's data. A placeholder is replaced by the value at
 * its dotted path as text (objects and lists as JSON, nothing for a missing value), so a template
 * renders to the same shape with strings filled in; numbers, booleans and null are kept as written.
 * `{{ path | text }}` and `{{ path | fallback:text }}` give `text` when the value is missing or
 * empty; `current_time` and `current_weekday` (optionally `_<IANA zone>`) are the send time's.
 */
const PLACEHOLDER = /\{\{\s*([^|\s}]+)(?:\s*\|\s*([^:}]+)(?::([^}]+))?)?\s*\}\}/g

export type TemplateContext = Readonly<Record<string, unknown>>

const valueAt = (context: unknown, path: string): unknown => {
  let current: unknown = context
  for (const key of path.split(".")) {
    if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined
    current = (current as Record<string, unknown>)[key]
    if (current === undefined || current === null) return undefined
  }
  return current
}

const part = (date: Date, zone: string, options: Intl.DateTimeFormatOptions) =>
  new Intl.DateTimeFormat("en-GB", { timeZone: zone, ...options }).format(date)

/** `2026-01-31 14:05:00 UTC`, as Dograh's `%Y-%m-%d %H:%M:%S %Z`. */
const timeIn = (now: Date, zone: string): string | undefined => {
  try {
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat("en-CA", {
        timeZone: zone,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
        hourCycle: "h23",
        timeZoneName: "short"
      }).formatToParts(now).map((p) => [p.type, p.value])
    )
    return `${parts["year"]}-${parts["month"]}-${parts["day"]} ${parts["hour"]}:${parts["minute"]}:${parts["second"]} ${
      parts["timeZoneName"]
    }`
  } catch {
    return undefined
  }
}

const weekdayIn = (now: Date, zone: string): string | undefined => {
  try {
    return part(now, zone, { weekday: "long" })
  } catch {
    return undefined
  }
}

const builtIn = (path: string, now: Date, defaultZone: string): string | undefined => {
  if (path === "current_time") return timeIn(now, defaultZone)
  if (path.startsWith("current_time_")) return timeIn(now, path.slice("current_time_".length))
  if (path === "current_weekday") return weekdayIn(now, defaultZone)
  if (path.startsWith("current_weekday_")) return weekdayIn(now, path.slice("current_weekday_".length))
  return undefined
}

const titleCase = (text: string) =>
  text.replace(/[A-Za-z]+/g, (word) => word[0]!.toUpperCase() + word.slice(1).toLowerCase())

const renderString = (template: string, context: TemplateContext, now: Date): string => {
  // `{{current_weekday}}` follows the zone of a `{{current_time_<zone>}}` in the same string.
  const zone = /\{\{\s*(?:current_time|current_weekday)_([^|\s}]+)/.exec(template)?.[1] ?? "UTC"
  return template.replace(PLACEHOLDER, (_match, rawPath: string, filter?: string, filterValue?: string) => {
    const path = rawPath.trim()
    let value: unknown = builtIn(path, now, zone)
    if (value === undefined) value = valueAt(context, path)
    if (value === undefined && path.startsWith("initial_context.")) {
      value = valueAt(context, path.slice("initial_context.".length))
    }
    if (filter !== undefined && (value === undefined || value === "")) {
      return filter.trim() === "fallback" ? (filterValue?.trim() ?? titleCase(path)) : filter.trim()
    }
    if (value === undefined || value === null) return ""
    if (typeof value === "object") return JSON.stringify(value)
    return String(value)
  }).replaceAll("\\n", "\n")
}

/** The template rendered over `context` at `now`. */
export const renderPayloadTemplate = (template: unknown, context: TemplateContext, now: Date): unknown => {
  if (typeof template === "string") return renderString(template, context, now)
  if (Array.isArray(template)) return template.map((item) => renderPayloadTemplate(item, context, now))
  if (typeof template === "object" && template !== null) {
    return Object.fromEntries(
      Object.entries(template).map(([key, value]) => [
        renderString(key, context, now),
        renderPayloadTemplate(value, context, now)
      ])
    )
  }
  return template
}

/**
 * A webhook node's body: its template rendered (an empty object without one), with
 * `call_disposition` added when the template did not set it (Dograh always sends it).
 */
export const webhookNodeBody = (template: unknown, context: TemplateContext, now: Date): unknown => {
  const body = renderPayloadTemplate(template ?? {}, context, now)
  if (typeof body === "object" && body !== null && !Array.isArray(body) && !("call_disposition" in body)) {
    return { ...body, call_disposition: context["call_disposition"] ?? "" }
  }
  return body
}
