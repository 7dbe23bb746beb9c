import { Effect, Option } from "effect"
import { ConversationStarts } from "../../services/ConversationStarts.ts"
import { ModelSettings } from "../../services/ModelSettings.ts"
import type { BrowserCall } from "../../services/VoiceCalls.ts"
import { Conflict } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import type { MediaLinks } from "./mediaLinks.ts"
import type { VoiceRuns } from "./voiceRuns.ts"

interface CallStart {
  readonly initial_context?: Readonly<Record<string, unknown>> | undefined
  readonly use_draft?: boolean | undefined
}

/** A test call's link is for the page that asked for it, right away. */
const BROWSER_TOKEN_SECONDS = 120

/** Browser test calls: a run of the agent awaiting the page's microphone on a signed media link. */
export const makeBrowserCalls = (runs: VoiceRuns, links: MediaLinks) =>
  Effect.gen(function*() {
    const starts = yield* ConversationStarts
    const modelSettings = yield* ModelSettings

    /** A run of the agent awaiting its media: checked it can hold a voice call, with the voice settings it needs. */
    const insertRun = Effect.fnUntraced(function*(
      principal: Principal,
      workflowId: number,
      input: CallStart,
      run: { readonly mode: string; readonly name: string }
    ) {
      const initialContext = input.initial_context ?? {}
      const prepared = yield* starts.prepare(principal, workflowId, {
        useDraft: input.use_draft === true,
        initialContext,
        channel: "call"
      })
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
      const runId = yield* runs.insert({
        organizationId: principal.organizationId,
        workflowId,
        definitionId: prepared.definitionId,
        versionNumber: prepared.versionNumber,
        name: run.name,
        mode: run.mode,
        initialContext,
        conversation: prepared.conversation
      })
      yield* Effect.annotateCurrentSpan({
        run_id: runId,
        workflow_id: workflowId,
        organization_id: principal.organizationId
      })
      return runId
    })

    const start = Effect.fn("VoiceCalls.startBrowserCall")(function*(
      principal: Principal,
      workflowId: number,
      input: CallStart
    ) {
      const runId = yield* insertRun(principal, workflowId, input, { mode: "webrtc", name: "Browser test call" })
      const link = yield* links.link("browser", runId, BROWSER_TOKEN_SECONDS)
      return { workflow_run_id: runId, media_url: link.url, expires_at: link.expiresAt } satisfies BrowserCall
    })

    return { start, insertRun }
  })
