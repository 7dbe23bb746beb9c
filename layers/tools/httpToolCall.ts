import { Clock, Effect, Option } from "effect"
import type { CredentialsShape } from "../../services/Credentials.ts"
import { OutboundBlocked, type OutboundHttpShape } from "../../services/OutboundHttp.ts"
import type { ToolCallInput } from "../../services/ToolRunner.ts"
import { credentialHeader, maskSecret } from "../../src/tools/credentialHeaders.ts"
import { SECRET_FIELDS } from "../../src/tools/credentialRecord.ts"
import {
  buildToolRequest,
  resolvePresets,
  type ToolHttpRequest,
  UnsafeUrlValue
} from "../../src/tools/httpToolRequest.ts"
import { checkArguments } from "../../src/tools/toolArguments.ts"
import { DEFAULT_RESULT_CHARS, DEFAULT_TOOL_TIMEOUT_MS, type HttpApiConfig } from "../../src/tools/toolDefinition.ts"
import { answerForModel, truncatedForModel } from "../../src/tools/toolResult.ts"
import { failedOutcome, type ToolOutcome, type ToolRequestShown } from "../../src/tools/toolRun.ts"
import { readReply } from "../outbound/replyBody.ts"

/** The most of an answer ever read: past it the connection is cut and the model gets what came, with a note. */
export const TOOL_ANSWER_CAP = 5 * 1024 * 1024

class ToolTimedOut extends Error {}

/** Why a request failed, in words for the model and the log; never the provider's text or a header. */
const failureText = (error: unknown, timeoutMs: number): string => {
  if (error instanceof ToolTimedOut) return `the API did not answer within ${timeoutMs} ms`
  if (error instanceof OutboundBlocked) return `the API's address is refused by the organization's outbound policy`
  const code = (error as { code?: unknown } | null)?.code
  return `the request to the API failed${typeof code === "string" ? ` (${code})` : ""}`
}

/** A secret that was sent must not come back in an answer (an API that echoes its request headers). */
const scrub = (text: string, secrets: ReadonlyArray<string>) =>
  secrets.reduce((scrubbed, secret) => (secret.length >= 4 ? scrubbed.split(secret).join("****") : scrubbed), text)

const parsedOrText = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * One call of an HTTP API tool: arguments checked, presets resolved, the request built, the
 * credential put on it only when the request goes to the host it is bound to, sent through the
 * outbound policy with a timeout, the answer read up to 5 MB and cut to what the model reads.
 */
export const callHttpTool = (
  outbound: OutboundHttpShape,
  credentials: CredentialsShape,
  input: ToolCallInput,
  config: HttpApiConfig
): Effect.Effect<ToolOutcome> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const elapsed = Effect.map(Clock.currentTimeMillis, (now) => now - started)
    const checked = checkArguments(config.parameters ?? [], input.arguments)
    if (checked._tag === "Invalid") {
      return failedOutcome(
        `the arguments do not fit the tool's parameters: ${
          checked.problems.join("; ")
        }. Call it again with valid arguments.`,
        yield* elapsed
      )
    }
    const presets = input.presetValues !== undefined
      ? { _tag: "Resolved" as const, values: input.presetValues }
      : resolvePresets(config.preset_parameters ?? [], input.variables)
    if (presets._tag === "Unresolved") return failedOutcome(presets.problems.join("; "), yield* elapsed)
    let built: ToolHttpRequest
    try {
      built = buildToolRequest(config, { ...checked.values, ...presets.values }, input.variables)
    } catch (error) {
      if (!(error instanceof UnsafeUrlValue)) throw error
      return failedOutcome(`${error.message}; call the tool again with a real value`, yield* elapsed)
    }
    const url = new URL(built.url)
    const headers: Record<string, string> = { ...built.headers }
    const shownHeaders: Record<string, string> = { ...built.headers }
    let secrets: Array<string> = []
    if (config.credential_uuid) {
      const credential = yield* credentials.forRequest(input.organizationId, config.credential_uuid)
      if (Option.isNone(credential)) {
        return failedOutcome("the tool's credential no longer exists; the tool cannot be used", yield* elapsed)
      }
      const host = url.host.toLowerCase()
      // Bound when the tool was saved; a credential whose secret was sent again binds at its next use.
      const boundHere = credential.value.boundHost === host ||
        (credential.value.boundHost === null &&
          (yield* credentials.bind(input.organizationId, credential.value.id, host)))
      if (!boundHere) {
        yield* Effect.logWarning("A tool's credential was refused for a host it is not bound to").pipe(
          Effect.annotateLogs({ tool_uuid: input.tool.uuid, host, bound_host: credential.value.boundHost })
        )
        return failedOutcome(
          "the tool's credential is bound to another host and is never sent elsewhere; the tool cannot be used",
          yield* elapsed
        )
      }
      const header = credentialHeader(credential.value.type, credential.value.data)
      if (header) {
        headers[header.name] = header.value
        shownHeaders[header.name] = maskSecret(header.value)
        secrets = [
          header.value,
          ...SECRET_FIELDS[credential.value.type].map((field) => credential.value.data[field] ?? "")
        ]
      }
    }
    const request: ToolRequestShown = { method: built.method, url: built.url, headers: shownHeaders, body: built.body }
    const timeoutMs = config.timeout_ms ?? DEFAULT_TOOL_TIMEOUT_MS
    const answer = yield* Effect.tryPromise({
      try: async (interrupted) => {
        // One controller for both the timeout and interruption (AbortSignal.any is costly on Node 20).
        const controller = new AbortController()
        let timedOut = false
        const timer = setTimeout(() => {
          timedOut = true
          controller.abort()
        }, timeoutMs)
        const onInterrupt = () => controller.abort()
        interrupted.addEventListener("abort", onInterrupt, { once: true })
        const { signal } = controller
        try {
          const response = await outbound.send("tool", {
            url,
            method: built.method,
            headers,
            body: built.body === undefined ? undefined : JSON.stringify(built.body),
            signal
          })
          const onAbort = () => response.destroy(new ToolTimedOut())
          signal.addEventListener("abort", onAbort, { once: true })
          try {
            const body = await readReply(response, TOOL_ANSWER_CAP, { truncate: true })
            return {
              status: response.statusCode ?? 0,
              contentType: String(response.headers["content-type"] ?? ""),
              body,
              cut: body.length >= TOOL_ANSWER_CAP
            }
          } finally {
            signal.removeEventListener("abort", onAbort)
          }
        } catch (error) {
          throw timedOut ? new ToolTimedOut() : error
        } finally {
          clearTimeout(timer)
          interrupted.removeEventListener("abort", onInterrupt)
        }
      },
      catch: (error) => error
    }).pipe(Effect.either)
    const latency = yield* elapsed
    if (answer._tag === "Left") {
      const reason = failureText(answer.left, timeoutMs)
      yield* Effect.logInfo("Tool call failed").pipe(
        Effect.annotateLogs({ tool_uuid: input.tool.uuid, host: url.host, latency_ms: latency, reason })
      )
      return failedOutcome(reason, latency, { request })
    }
    const { body, contentType, cut, status } = answer.right
    const text = scrub(body.toString("utf8"), secrets)
    const shown = answerForModel(text, contentType, config.response_pointer, cut)
    const fitted = truncatedForModel(shown, config.max_result_chars ?? DEFAULT_RESULT_CHARS)
    const limited = cut
      ? { text: `${fitted.text}\n[the answer was larger than 5 MB; only its beginning was read]`, truncated: true }
      : fitted
    const ok = status >= 200 && status < 300
    yield* Effect.logDebug("Tool call").pipe(
      Effect.annotateLogs({ tool_uuid: input.tool.uuid, host: url.host, status_code: status, latency_ms: latency })
    )
    return {
      status: ok ? "success" : "error",
      result: ok ? limited.text : `Error: the API answered HTTP ${status}: ${limited.text}`,
      truncated: limited.truncated || cut,
      latency_ms: latency,
      status_code: status,
      request,
      data: cut ? null : parsedOrText(text)
    } satisfies ToolOutcome
  })
