import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { Credentials } from "../../services/Credentials.ts"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { WEBHOOK_METHODS } from "../../src/graph/definition.ts"
import { credentialHeader } from "../../src/tools/credentialHeaders.ts"
import { FORBIDDEN_HEADERS } from "../../src/tools/credentialRecord.ts"
import { failureText } from "../../src/webhooks/attemptFailure.ts"
import { type TemplateContext, webhookNodeBody } from "../../src/webhooks/payloadTemplate.ts"
import { nodeDeliveryId } from "../../src/webhooks/webhookRecord.ts"
import { readBoundedReply } from "../outbound/replyBody.ts"
import { webhookArtifactLink } from "./webhookPayloads.ts"
import type { ClaimedNodeDelivery } from "./webhookRows.ts"

/** What is kept of a receiver's answer: it is not read, only drained within this bound. */
const REPLY_LIMIT = 64 * 1024

interface RunContextRow {
  readonly id: number
  readonly name: string
  readonly workflow_id: number
  readonly workflow_name: string | null
  readonly campaign_id: number | null
  readonly caller_number: string | null
  readonly called_number: string | null
  readonly disposition: string | null
  readonly end_reason: string | null
  readonly initial_context: Record<string, unknown>
  readonly gathered_context: Record<string, unknown>
  readonly transcript: ReadonlyArray<unknown>
  readonly duration_seconds: number
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly tts_characters: number
  readonly stt_seconds: number
  readonly recording_key: string | null
  readonly transcript_key: string | null
  readonly created_at: Date
}

type Method = (typeof WEBHOOK_METHODS)[number]
const METHODS: ReadonlyArray<Method> = WEBHOOK_METHODS

/**
 * A webhook node's messages (Dograh's `webhook` node): the body rendered from the node's
 * `payload_template` over its run's data under Dograh's variable names, and the request sent with
 * the node's method, headers and credential through the outbound policy. Unsigned, as Dograh's
 * are: a receiver authenticates them by the credential it was given.
 */
export const makeWebhookNodeMessages = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const outbound = yield* OutboundHttp
  const credentials = yield* Credentials
  const secrets = yield* SecretBox
  const link = webhookArtifactLink(yield* PublicUrl, secrets.sign)
  const client = outbound.client("webhook")

  /** Dograh's render context (api/tasks/run_integrations.py, `_build_render_context`), plus the run's transcript and outcome. */
  const contextOf = (run: RunContextRow, nowSeconds: number): TemplateContext => ({
    workflow_run_id: Number(run.id),
    workflow_run_name: run.name,
    workflow_id: Number(run.workflow_id),
    workflow_name: run.workflow_name,
    campaign_id: run.campaign_id === null ? null : Number(run.campaign_id),
    call_time: run.created_at.toISOString(),
    initial_context: run.initial_context,
    gathered_context: run.gathered_context,
    cost_info: {
      call_duration_seconds: run.duration_seconds,
      prompt_tokens: Number(run.prompt_tokens),
      completion_tokens: Number(run.completion_tokens),
      tts_characters: Number(run.tts_characters),
      stt_seconds: run.stt_seconds
    },
    annotations: {},
    extra: {},
    recording_url: run.recording_key === null ? null : link(Number(run.id), "recording", nowSeconds),
    transcript_url: run.transcript_key === null ? null : link(Number(run.id), "transcript", nowSeconds),
    user_recording_url: null,
    bot_recording_url: null,
    transcript: run.transcript,
    call_duration: run.duration_seconds,
    duration_seconds: run.duration_seconds,
    disposition: run.disposition,
    call_disposition: run.disposition ?? run.gathered_context["call_disposition"] ?? "",
    end_reason: run.end_reason,
    caller_number: run.caller_number,
    called_number: run.called_number
  })

  /** The bodies of `deliveries`, by delivery id, rendered at `now` (their runs read in one query). */
  const render = (deliveries: ReadonlyArray<ClaimedNodeDelivery>, now: number) =>
    Effect.gen(function*() {
      const bodies = new Map<number, unknown>()
      if (deliveries.length === 0) return bodies
      const runIds = [...new Set(deliveries.map((delivery) => Number(delivery.run_id)))]
      const runs = yield* sql<RunContextRow>`
        SELECT r.id, r.name, r.workflow_id, w.name AS workflow_name, r.campaign_id, r.caller_number, r.called_number,
               r.disposition, r.end_reason, r.initial_context, r.gathered_context, r.transcript, r.duration_seconds,
               r.prompt_tokens, r.completion_tokens, r.tts_characters, r.stt_seconds, r.recording_key,
               r.transcript_key, r.created_at
        FROM runs r LEFT JOIN workflows w ON w.id = r.workflow_id
        WHERE r.id IN ${sql.in(runIds)}`
      const seconds = Math.floor(now / 1000)
      const contexts = new Map(runs.map((run) => [Number(run.id), contextOf(run, seconds)]))
      for (const delivery of deliveries) {
        const context = contexts.get(Number(delivery.run_id)) ?? { workflow_run_id: Number(delivery.run_id) }
        bodies.set(
          Number(delivery.id),
          webhookNodeBody(delivery.node_request["payload_template"], context, new Date(now))
        )
      }
      return bodies
    })

  /** The node's headers: JSON, its credential, then its custom headers (Dograh's order); none the transport owns. */
  const headersFor = (delivery: ClaimedNodeDelivery, url: URL) =>
    Effect.gen(function*() {
      const request = delivery.node_request
      const headers: Record<string, string> = { "content-type": "application/json" }
      const uuid = request["credential_uuid"]
      if (typeof uuid === "string" && uuid !== "") {
        const credential = yield* credentials.forRequest(delivery.organization_id, uuid)
        if (Option.isNone(credential)) return { refused: "the node's credential no longer exists" } as const
        const host = url.host.toLowerCase()
        // Bound at its first use when it was saved without a host: never sent to another host after.
        const boundHere = credential.value.boundHost === host ||
          (credential.value.boundHost === null &&
            (yield* credentials.bind(delivery.organization_id, credential.value.id, host)))
        if (!boundHere) {
          yield* Effect.logWarning("A webhook node's credential was refused for a host it is not bound to").pipe(
            Effect.annotateLogs({ delivery_id: delivery.id, host, bound_host: credential.value.boundHost })
          )
          return { refused: "the node's credential is bound to another host and is never sent elsewhere" } as const
        }
        const header = credentialHeader(credential.value.type, credential.value.data)
        if (header) headers[header.name.toLowerCase()] = header.value
      }
      const custom = request["custom_headers"]
      if (Array.isArray(custom)) {
        for (const entry of custom as ReadonlyArray<{ key?: unknown; value?: unknown }>) {
          if (typeof entry.key !== "string" || typeof entry.value !== "string" || entry.key === "") continue
          if (FORBIDDEN_HEADERS.has(entry.key.toLowerCase())) continue
          headers[entry.key.toLowerCase()] = entry.value
        }
      }
      // Dograh's delivery headers, so a receiver written for Dograh tells retries apart as before.
      headers["x-dograh-delivery-id"] = nodeDeliveryId(Number(delivery.id))
      headers["x-dograh-workflow-run-id"] = String(delivery.run_id)
      headers["x-dograh-delivery-attempt"] = String(delivery.attempts)
      headers["user-agent"] = "talkgraph-webhooks"
      return { headers } as const
    })

  /** Sends one node message; answers what the attempt came to, for the batch's bookkeeping. */
  const send = (delivery: ClaimedNodeDelivery, body: unknown, timeoutMillis: number) =>
    Effect.gen(function*() {
      const attemptedAt = yield* Clock.currentTimeMillis
      const done = (status: number | null, error: string | null) =>
        Effect.map(Clock.currentTimeMillis, (after) => ({
          delivery,
          attemptedAt,
          latency: after - attemptedAt,
          status,
          error
        }))
      // A draft is saved with only its structure checked, so a test run may carry a node that cannot be sent.
      const url = URL.canParse(String(delivery.node_request["endpoint_url"]))
        ? new URL(String(delivery.node_request["endpoint_url"]))
        : null
      if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) {
        return yield* done(null, "the node's endpoint_url is not an http or https URL")
      }
      const asked = delivery.node_request["http_method"] ?? "POST"
      if (!METHODS.includes(asked as Method)) {
        return yield* done(null, "the node's http_method is not one of " + METHODS.join(", "))
      }
      const method = asked as Method
      const built = yield* headersFor(delivery, url)
      if ("refused" in built) {
        return yield* done(null, built.refused)
      }
      let request = HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeaders(built.headers))
      if (method === "POST" || method === "PUT" || method === "PATCH") {
        request = HttpClientRequest.bodyText(request, JSON.stringify(body), "application/json")
      }
      const sent = yield* client.execute(request).pipe(
        Effect.tap((response) => readBoundedReply(response, REPLY_LIMIT).pipe(Effect.ignore)),
        Effect.map((response) => response.status),
        Effect.scoped,
        Effect.timeout(timeoutMillis),
        Effect.either
      )
      if (sent._tag === "Left") return yield* done(null, failureText(sent.left))
      const status = sent.right
      return yield* done(status, status >= 200 && status < 300 ? null : `the receiver answered ${status}`)
    }).pipe(
      Effect.withSpan("WebhookDelivery.sendNode", {
        attributes: { "delivery.id": delivery.id, "organization.id": delivery.organization_id }
      })
    )

  return { render, send }
})
