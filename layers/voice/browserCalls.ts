import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ModelSettings } from "../../services/ModelSettings.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import type { BrowserCall } from "../../services/VoiceCalls.ts"
import { initialState } from "../../src/conversation/conversationState.ts"
import { limitsFrom } from "../../src/conversation/limits.ts"
import { runContext } from "../../src/conversation/runContext.ts"
import { Conflict, NotFound } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { mediaStreamUrl, mediaToken } from "../../src/telephony/mediaToken.ts"
import { chatIdleTimeoutSeconds } from "../conversation/chatConfig.ts"
import { runnableGraph } from "../conversation/chatPlans.ts"
import type { StoredConversation } from "../conversation/chatRunRows.ts"
import { llmTimeoutSeconds } from "../llm/llmTimeout.ts"

/** A test call's link is for the page that asked for it, right away. */
const BROWSER_TOKEN_SECONDS = 120

interface VersionRow {
  readonly workflow_status: "active" | "archived"
  readonly definition_id: number
  readonly version_number: number
  readonly version_status: "draft" | "published"
  readonly workflow_definition: unknown
  readonly template_context_variables: Record<string, unknown> | null
  readonly workflow_configurations: Record<string, unknown> | null
}

/** Browser test calls: a run on the web channel whose audio is the page's microphone. */
export const makeBrowserCalls = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const secrets = yield* SecretBox
  const publicUrl = yield* PublicUrl
  const modelSettings = yield* ModelSettings
  const defaults = { llmTimeoutSeconds: yield* llmTimeoutSeconds, idleTimeoutSeconds: yield* chatIdleTimeoutSeconds }

  const start = Effect.fn("VoiceCalls.startBrowserCall")(function*(
    principal: Principal,
    workflowId: number,
    input: {
      readonly initial_context?: Readonly<Record<string, unknown>> | undefined
      readonly use_draft?: boolean | undefined
    }
  ) {
    const versions = yield* sql<VersionRow>`
      SELECT w.status AS workflow_status, d.id AS definition_id, d.version_number, d.version_status, d.workflow_definition,
             d.template_context_variables, d.workflow_configurations
      FROM workflows w JOIN workflow_definitions d ON d.workflow_id = w.id
      WHERE w.id = ${workflowId} AND w.organization_id = ${principal.organizationId} AND d.version_status IN ('draft', 'published')`
      .pipe(Effect.orDie)
    if (versions.length === 0) {
      const [exists] =
        yield* sql`SELECT 1 FROM workflows WHERE id = ${workflowId} AND organization_id = ${principal.organizationId}`
          .pipe(Effect.orDie)
      if (!exists) return yield* new NotFound({ resource: "Workflow", id: workflowId })
    }
    const version = input.use_draft === true
      ? versions.find((row) => row.version_status === "draft") ??
        versions.find((row) => row.version_status === "published")
      : versions.find((row) => row.version_status === "published")
    if (!version) {
      return yield* new Conflict({
        message: "This workflow has no published version yet: publish it, or start the call with use_draft"
      })
    }
    if (version.workflow_status === "archived") return yield* new Conflict({ message: "This workflow is archived" })
    const graph = yield* runnableGraph(version.workflow_definition)
    const [stt, tts, llm] = yield* Effect.all([
      modelSettings.speechFor(principal.organizationId, "stt"),
      modelSettings.speechFor(principal.organizationId, "tts"),
      modelSettings.llmFor(principal.organizationId)
    ])
    if (Option.isNone(stt) || Option.isNone(tts) || Option.isNone(llm)) {
      return yield* new Conflict({
        message:
          "Voice calls need LLM, STT and TTS settings: set them with PUT /api/v1/organizations/model-configurations"
      })
    }
    const start = graph.nodes.find((node) => node.type === "startCall")!
    const initialContext = input.initial_context ?? {}
    const conversation: StoredConversation = {
      state: initialState(start.id),
      context: runContext(version.template_context_variables, initialContext),
      limits: limitsFrom(version.workflow_configurations, defaults),
      ...(version.version_status === "draft" ? { definition: version.workflow_definition } : {})
    }
    const [run] = yield* sql<{ id: number }>`
      INSERT INTO runs (organization_id, workflow_id, definition_id, version_number, name, channel, mode, direction, state,
                        initial_context, conversation)
      VALUES (${principal.organizationId}, ${workflowId}, ${version.definition_id}, ${version.version_number}, ${"Browser test call"},
              'web', 'webrtc', 'inbound', 'initialized', ${JSON.stringify(initialContext)}::jsonb, ${
      JSON.stringify(conversation)
    }::jsonb)
      RETURNING id`.pipe(Effect.orDie)
    const expires = Math.floor(Date.now() / 1000) + BROWSER_TOKEN_SECONDS
    return {
      workflow_run_id: run!.id,
      media_url: mediaStreamUrl(publicUrl, "browser", run!.id, mediaToken(secrets.sign, run!.id, expires)),
      expires_at: new Date(expires * 1000)
    } satisfies BrowserCall
  })

  return { start }
})
