import { Socket } from "@effect/platform"
import { Clock, Deferred, Effect, FiberMap, Layer, Option, Schedule, Scope } from "effect"
import * as crypto from "node:crypto"
import { CampaignCalls } from "../../services/CampaignCalls.ts"
import { CarrierAccounts } from "../../services/CarrierAccounts.ts"
import { ConversationEngine, type ConversationPlan } from "../../services/ConversationEngine.ts"
import { ConversationStarts, type StoredConversation } from "../../services/ConversationStarts.ts"
import { ModelSettings, type SpeechConnection } from "../../services/ModelSettings.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { Recordings } from "../../services/Recordings.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { SpeechToText } from "../../services/SpeechToText.ts"
import { Storage } from "../../services/Storage.ts"
import { Telephony } from "../../services/Telephony.ts"
import { TextToSpeech } from "../../services/TextToSpeech.ts"
import { TurnModel } from "../../services/TurnModel.ts"
import { VoiceActivity } from "../../services/VoiceActivity.ts"
import {
  type MediaConnection,
  type MediaLine,
  type MediaSource,
  type TestCall,
  VoiceCalls
} from "../../services/VoiceCalls.ts"
import { MU_LAW_DECODE } from "../../src/audio/g711.ts"
import { isFailure } from "../../src/conversation/endReason.ts"
import { addUsage, noUsage } from "../../src/conversation/transcript.ts"
import { Forbidden, NotFound } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { renderTemplate } from "../../src/graph/templateVariables.ts"
import { validateDefinition } from "../../src/graph/validation.ts"
import { mediaProtocolFor } from "../../src/telephony/media/mod.ts"
import { isValidMediaToken } from "../../src/telephony/mediaToken.ts"
import { isValidTwilioSignature } from "../../src/telephony/twilioSignature.ts"
import { testCallMode } from "../../src/usage/channels.ts"
import { latencySummary } from "../../src/voice/latencyStats.ts"
import { callTurnSettings } from "../../src/voice/turnTaking/agentSettings.ts"
import { voiceIdleSeconds } from "../../src/voice/voiceLimits.ts"
import { callVoicemailPolicy } from "../../src/voice/voicemailPolicy.ts"
import { makeBrowserCalls } from "./browserCalls.ts"
import { runCallSession } from "./callSession.ts"
import { makeCallTransfers } from "./callTransfers.ts"
import { makeInboundBacklog } from "./inboundBacklog.ts"
import { makeInboundCalls } from "./inboundCalls.ts"
import { makeMediaLinks } from "./mediaLinks.ts"
import { CALL_LEASE_SECONDS, makeVoiceRuns, type MediaRun } from "./voiceRuns.ts"

const refused = (message: string) => new Forbidden({ message })

/** How long a caller whose transfer was not answered may take to come back on a new media stream. */
const RETURN_WAIT = "15 seconds"

/** How long a tool may take before the caller hears its filler line: past this, silence sounds like a dropped call. */
const TOOL_FILLER_AFTER_MS = 700

export const VoiceCallsLive = Layer.scoped(
  VoiceCalls,
  Effect.gen(function*() {
    const secrets = yield* SecretBox
    const modelSettings = yield* ModelSettings
    const engine = yield* ConversationEngine
    const telephony = yield* Telephony
    const campaignCalls = yield* CampaignCalls
    const storage = yield* Storage
    const recordings = yield* Recordings
    const services = {
      engine,
      vad: yield* VoiceActivity,
      speechToText: yield* SpeechToText,
      textToSpeech: yield* TextToSpeech,
      turnModel: yield* TurnModel
    }
    const starts = yield* ConversationStarts
    const runs = yield* makeVoiceRuns
    const links = yield* makeMediaLinks
    const accounts = yield* CarrierAccounts
    const transfers = yield* makeCallTransfers(runs, accounts, telephony, links, yield* PublicUrl)
    // Calls outlive the request that upgraded their socket: they end (and are stored) on their own.
    const calls = yield* FiberMap.make<number>()

    const speechSettings = (organizationId: number) =>
      Effect.all({
        stt: modelSettings.speechFor(organizationId, "stt"),
        tts: modelSettings.speechFor(organizationId, "tts"),
        llm: modelSettings.llmFor(organizationId)
      })

    /** The conversation a run starts with: fixed at its first media connection. */
    const conversationOf = (run: MediaRun) =>
      run.conversation
        ? Effect.succeed(run.conversation)
        : starts.conversationOf(run, run.initial_context, run.organization_id)

    /** PCM of a recorded clip at the call's rate, converted once at registration (no transcoding here). */
    const clipPcm = (organizationId: number, recordingId: string, sampleRate: 8000 | 16000) =>
      recordings.playback(organizationId, recordingId, sampleRate === 8000 ? "ulaw_8k" : "pcm_16k").pipe(
        Effect.map((bytes) =>
          sampleRate === 8000
            ? Int16Array.from(bytes, (byte) => MU_LAW_DECODE[byte]!)
            : new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + (bytes.byteLength & ~1)))
        ),
        Effect.option
      )

    /**
     * `callId` is the call the media stream named when it started: the live call's own id for every
     * carrier that sends one (a placed Plivo call answered its placement with another id).
     */
    const hangUpAtCarrier = (run: MediaRun, callId: string | null) =>
      Effect.gen(function*() {
        const providerCallId = run.provider_call_id ?? callId
        if (run.channel !== "telephony" || run.telephony_configuration_id === null || providerCallId === null) return
        const account = yield* accounts.forConfiguration(run.organization_id, run.telephony_configuration_id)
        if (Option.isNone(account)) return
        yield* telephony.adapter(account.value.provider).hangUp(account.value, {
          providerCallId,
          liveCallId: run.live_call_id ?? callId
        })
      }).pipe(Effect.catchAll((error) =>
        Effect.logWarning("Could not hang up a call at the carrier", { run_id: run.id, error: error.message })
      ))

    /** The call on its socket, from the first frame to the stored run. */
    const serve = (
      source: MediaSource,
      run: MediaRun,
      conversation: StoredConversation,
      plan: ConversationPlan,
      speech: { readonly stt: SpeechConnection; readonly tts: SpeechConnection },
      socket: MediaLine
    ) =>
      Effect.scoped(Effect.gen(function*() {
        const token = crypto.randomUUID()
        if (!(yield* runs.hold(run.id, token, conversation))) {
          yield* Effect.logWarning("A second media connection for a call was refused", { run_id: run.id })
          return
        }
        yield* runs.renew(run.id, token).pipe(
          Effect.repeat(Schedule.spaced(`${CALL_LEASE_SECONDS / 3} seconds`)),
          Effect.forkScoped
        )
        const protocol = mediaProtocolFor(source)
        const scope = yield* Effect.scope
        let write = yield* socket.writer
        /**
         * A write to a socket the other end has closed waits for ever: once it closed, nothing is
         * sent (what the call still records after a hang-up, the browser's progress included).
         */
        let open = true
        const send = (messages: ReadonlyArray<string | Uint8Array>) =>
          Effect.forEach(messages, (message) => (open ? write(message) : Effect.void), { discard: true }).pipe(
            Effect.ignore
          )
        /** Closes the media socket; one the other end closed meanwhile would take the write for ever. */
        const closeLine = (reason: string) =>
          Effect.suspend(() => write(new Socket.CloseEvent(1000, reason))).pipe(
            Effect.timeout("2 seconds"),
            Effect.ignore
          )
        const inbound = yield* makeInboundBacklog(run.id)
        let callId: string | null = null
        /** The socket the call's media flows on now: a caller back from a transfer brings a new one. */
        let current = 0
        const listen = (media: MediaLine) =>
          Effect.suspend(() => {
            const mine = ++current
            // A caller back from a transfer: what the earlier stream queued stays ahead of this.
            if (mine > 1) inbound.offerNow({ _tag: "Resumed" })
            return media.runRaw((message) => {
              // A stream the call has moved on from says nothing more (its late stop is no hang-up).
              if (mine !== current) return
              const warnings: Array<Effect.Effect<void>> = []
              for (const received of protocol.receive(message)) {
                if (received._tag === "Started" && received.callId) callId = received.callId
                const warning = inbound.offerNow(received)
                if (warning !== undefined) warnings.push(warning)
              }
              return warnings.length === 0 ? undefined : Effect.all(warnings, { discard: true })
            }).pipe(
              Effect.ignore,
              Effect.zipRight(Effect.suspend(() =>
                mine === current
                  ? Effect.zipRight(Effect.sync(() => (open = false)), inbound.offer({ _tag: "Closed" }))
                  : Effect.void
              )),
              Effect.forkIn(scope),
              Effect.asVoid
            )
          })
        yield* listen(socket)
        /** The caller's new stream after a transfer that was not answered: the call goes on over it. */
        const awaitReturn = Effect.gen(function*() {
          const back = yield* transfers.awaitReturn(run.id, RETURN_WAIT)
          if (Option.isNone(back)) return false
          yield* Scope.addFinalizer(scope, Deferred.succeed(back.value.released, undefined))
          write = yield* back.value.socket.writer.pipe(Scope.extend(scope))
          open = true
          yield* listen(back.value.socket)
          return true
        })

        const voicemail = callVoicemailPolicy(run.workflow_configurations, run.campaign_voicemail)
        // Only a placed call can reach an answering machine; a browser or inbound caller is a person.
        const detectsMachines = run.direction === "outbound" && source !== "browser" &&
          voicemail.detection === "in_call"
        const clipByText = new Map<string, string>()
        for (const [id, text] of plan.recordingTexts ?? []) clipByText.set(text, id)
        const result = yield* runCallSession(services, {
          runId: run.id,
          protocol,
          send,
          inbound: inbound.queue,
          plan,
          stt: speech.stt,
          tts: speech.tts,
          hangUp: Effect.gen(function*() {
            if (source !== "browser") yield* hangUpAtCarrier(run, callId)
            yield* closeLine("call ended")
          }),
          turnSettings: callTurnSettings(run.workflow_configurations, {
            idleTimeoutMs: voiceIdleSeconds(run.workflow_configurations) * 1000,
            maxDurationMs: conversation.limits.maxDurationSeconds * 1000,
            language: speech.stt.language
          }),
          save: (state, transcript) => runs.saveProgress(run.id, token, { ...conversation, state }, transcript),
          clipAudio: (text) => {
            const id = clipByText.get(text)
            return id === undefined ? Effect.succeedNone : clipPcm(run.organization_id, id, protocol.sampleRate)
          },
          ...(source === "browser"
            ? {}
            : {
              transfer: {
                ask: (endpoint, timeoutSeconds, whisper) =>
                  whisper === null
                    ? transfers.transfer(run, callId, endpoint, timeoutSeconds)
                    : transfers.warmTransfer(run, callId, endpoint, timeoutSeconds, whisper),
                streamSurvives: telephony.adapter(source).streamSurvivesTransfer,
                awaitReturn,
                // The carrier may have closed the stream itself (the transfer replaced it): nothing is written then.
                leave: Effect.suspend(() => open ? closeLine("call transferred") : Effect.void)
              }
            }),
          ...(detectsMachines
            ? {
              voicemail: {
                policy: voicemail,
                messageText: voicemail.messageText === null
                  ? null
                  : renderTemplate(voicemail.messageText, plan.context).trim(),
                messageRecording: voicemail.messageRecordingId === null
                  ? Effect.succeedNone
                  : clipPcm(run.organization_id, voicemail.messageRecordingId, protocol.sampleRate),
                onMachine: runs.machineAnswered(run.id)
              }
            }
            : {})
        })

        // The ending is stored even if the process is asked to stop meanwhile.
        yield* Effect.gen(function*() {
          const reachedVoicemail = result.ending.reason === "voicemail"
          // A machine's greeting is no conversation to classify or extract from: no model is asked.
          const conclusion = reachedVoicemail
            ? { gatheredContext: {}, disposition: "voicemail", usage: noUsage }
            : yield* engine.conclude(
              plan,
              result.state.node_id ? result.state : conversation.state,
              result.transcript,
              result.ending
            )
          const recordingKey = `calls/${run.organization_id}/${run.id}/recording.wav`
          const transcriptKey = `calls/${run.organization_id}/${run.id}/transcript.json`
          const stored = yield* Effect.all([
            storage.write(recordingKey, result.recorder.toWav(), "audio/wav"),
            storage.write(
              transcriptKey,
              JSON.stringify({ run_id: run.id, transcript: result.transcript }),
              "application/json"
            )
          ]).pipe(
            Effect.as(true),
            Effect.catchAll((error) =>
              Effect.logError("Could not store a call's recording", { run_id: run.id, error: error.message }).pipe(
                Effect.as(false)
              )
            )
          )
          const latency = latencySummary(result.latenciesMs)
          yield* runs.finish({
            runId: run.id,
            token,
            state: isFailure(result.ending.reason) ? "failed" : "completed",
            endReason: result.ending.reason,
            error: result.ending.error,
            conversation: { ...conversation, state: result.state.node_id ? result.state : conversation.state },
            transcript: result.transcript,
            // The failures the call survived (or ended on) stay on the run: which provider, and why.
            gatheredContext: result.providerFailures.length === 0
              ? conclusion.gatheredContext
              : { ...conclusion.gatheredContext, provider_failures: result.providerFailures },
            disposition: conclusion.disposition,
            usage: addUsage(result.usage, conclusion.usage),
            ttsCharacters: result.ttsCharacters,
            sttSeconds: Math.round(result.sttSeconds * 100) / 100,
            durationSeconds: Math.round(result.recorder.durationMs() / 1000),
            latencyP50: latency.p50_ms,
            latencyP90: latency.p90_ms,
            recordingKey: stored ? recordingKey : null,
            transcriptKey: stored ? transcriptKey : null
          })
          yield* Effect.logInfo("Voice call ended", {
            run_id: run.id,
            end_reason: result.ending.reason,
            turns: latency.turns,
            latency_p50_ms: latency.p50_ms
          })
        }).pipe(Effect.uninterruptible)
      })).pipe(Effect.withSpan("VoiceCalls.call", {
        attributes: {
          run_id: run.id,
          workflow_id: run.workflow_id,
          organization_id: run.organization_id,
          source
        }
      }))

    const admit = Effect.fn("VoiceCalls.admit")(function*(connection: MediaConnection) {
      const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      if (!isValidMediaToken(secrets.verify, connection.runId, connection.token, nowSeconds)) {
        yield* Effect.logWarning("Media connection refused: bad or expired token", {
          run_id: connection.runId,
          source: connection.source
        })
        return yield* refused("Invalid or expired media token")
      }
      const run = yield* runs.mediaRun(connection.runId)
      if (!run) return yield* new NotFound({ resource: "Call", id: connection.runId })
      yield* Effect.annotateCurrentSpan({
        run_id: run.id,
        workflow_id: run.workflow_id,
        organization_id: run.organization_id,
        source: connection.source
      })
      const expectedMode = connection.source === "browser" ? "webrtc" : connection.source
      if (run.mode !== expectedMode) return yield* refused("This media stream belongs to another provider")
      const returning = transfers.expectsReturn(run.id)
      if (!returning && (run.ended_at !== null || run.held)) {
        return yield* refused("This call has ended or is already connected")
      }
      if (connection.source === "twilio") {
        const account = run.telephony_configuration_id === null
          ? Option.none()
          : yield* accounts.forConfiguration(run.organization_id, run.telephony_configuration_id)
        const authToken = Option.isSome(account) ? account.value.credentials.auth_token ?? "" : ""
        if (!isValidTwilioSignature(authToken, connection.url, {}, connection.headers["x-twilio-signature"])) {
          yield* Effect.logWarning("Media connection refused: bad Twilio signature", { run_id: run.id })
          return yield* refused("Invalid Twilio signature")
        }
      }
      // The caller of a live call, back after a transfer that was not answered: the call takes the socket.
      if (returning) return (socket: Socket.Socket) => transfers.handBack(run.id, socket)
      return yield* prepare(connection.source, run)
    })

    /**
     * A run's call, ready to serve on a media line: its conversation fixed, its models and speech
     * settings read. A run that cannot hold a voice call is failed here, with the reason.
     */
    const prepare = (source: MediaSource, run: MediaRun) =>
      Effect.gen(function*() {
        const conversation = yield* conversationOf(run)
        const settings = yield* speechSettings(run.organization_id)
        if (
          conversation === null || Option.isNone(settings.llm) || Option.isNone(settings.stt) ||
          Option.isNone(settings.tts)
        ) {
          const settingsComplete = Option.isSome(settings.llm) && Option.isSome(settings.stt) &&
            Option.isSome(settings.tts)
          const reason = settingsComplete
            ? "The agent cannot take voice calls: its version has no valid graph"
            : "The agent cannot take voice calls: its organization needs LLM, STT and TTS settings"
          yield* Effect.logWarning("Media connection refused: the agent cannot run a voice call", { run_id: run.id })
          // The carrier would report the call "completed": it is a failure, and recorded as one.
          yield* campaignCalls.mediaRefused(run.id, reason)
          return yield* refused(reason)
        }
        const graph = validateDefinition(conversation.definition ?? run.workflow_definition).graph!
        const plan = {
          ...yield* starts.plan(run.organization_id, {
            graph,
            conversation,
            dispositionCodes: run.disposition_codes.filter((code): code is string => typeof code === "string"),
            connection: settings.llm.value,
            partyNumber: run.party_number
          }),
          // A caller waiting on a slow tool hears its filler line instead of silence.
          toolFillerAfterMs: TOOL_FILLER_AFTER_MS
        }
        const overrides = conversation.overrides
        const speech = {
          stt: overrides?.stt_language
            ? { ...settings.stt.value, language: overrides.stt_language }
            : settings.stt.value,
          tts: overrides?.tts_voice ? { ...settings.tts.value, voice: overrides.tts_voice } : settings.tts.value
        }
        return (line: MediaLine) =>
          FiberMap.run(calls, run.id, serve(source, run, conversation, plan, speech, line)).pipe(
            Effect.flatMap((fiber) => fiber.await),
            Effect.asVoid
          )
      })

    const browserCalls = yield* makeBrowserCalls(runs, links)
    const inboundCalls = yield* makeInboundCalls(runs, links)

    const startTestCall = Effect.fn("VoiceCalls.startTestCall")(function*(
      principal: Principal,
      workflowId: number,
      input: {
        readonly initial_context?: Readonly<Record<string, unknown>> | undefined
        readonly use_draft?: boolean | undefined
      }
    ) {
      const runId = yield* browserCalls.insertRun(principal, workflowId, input, {
        mode: testCallMode,
        name: "Agent test call"
      })
      const run = yield* runs.mediaRun(runId)
      if (!run) return yield* new NotFound({ resource: "Call", id: runId })
      return { runId: run.id, serve: yield* prepare("browser", run) } satisfies TestCall
    })

    return VoiceCalls.of({
      admit,
      startBrowserCall: browserCalls.start,
      startTestCall,
      inbound: inboundCalls.answer,
      transferEvent: transfers.event,
      transferMarkup: transfers.markup
    })
  })
)
