import type { Socket } from "@effect/platform"
import { Context, type Effect } from "effect"
import type { Conflict, Forbidden, NotFound, ValidationFailed } from "../src/domain/errors.ts"
import type { RunId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { MediaProvider } from "../src/telephony/media/mod.ts"
import type { Provider, WebhookRequest } from "./Telephony.ts"

/** Where a call's audio comes from: a carrier's media stream, or the browser test call page. */
export type MediaSource = MediaProvider

/** A media WebSocket as it arrived, before anything is trusted. */
export interface MediaConnection {
  readonly source: MediaSource
  readonly runId: RunId
  readonly token: string
  /** The public URL the carrier connected to and its headers (Twilio signs the upgrade). */
  readonly url: string
  readonly headers: Readonly<Record<string, string | undefined>>
}

/** What a call needs of its media socket: the messages that arrive, and a way to send (a WebSocket, or a line in memory). */
export type MediaLine = Pick<Socket.Socket, "runRaw" | "writer">

/** An agent test's voice call, ready to be served on the simulated caller's line. */
export interface TestCall {
  readonly runId: RunId
  /** Holds the call on `line` (browser media protocol) until it ends and is stored. */
  readonly serve: (line: MediaLine) => Effect.Effect<void>
}

export interface BrowserCall {
  readonly workflow_run_id: number
  /** The signed, expiring WebSocket URL the page streams microphone audio to. */
  readonly media_url: string
  readonly expires_at: Date
}

/**
 * Voice calls: each media stream becomes a conversation run by the engine, spoken and heard
 * through the organization's STT and TTS. A call lives on the process holding its socket.
 */
export interface VoiceCallsShape {
  /**
   * Checks a media connection (signed token for this run, the run awaiting media, the carrier's
   * signature where it signs); on success answers the call handler to run on the upgraded socket.
   */
  readonly admit: (
    connection: MediaConnection
  ) => Effect.Effect<(socket: Socket.Socket) => Effect.Effect<void>, Forbidden | NotFound>
  /** Starts a browser test call of a workflow (its published version, or the draft). */
  readonly startBrowserCall: (
    principal: Principal,
    workflowId: number,
    input: {
      readonly initial_context?: Readonly<Record<string, unknown>> | undefined
      readonly use_draft?: boolean | undefined
    }
  ) => Effect.Effect<BrowserCall, NotFound | Conflict | ValidationFailed>
  /**
   * Starts an agent test's voice call (mode `testcall`, billed as a test run): the real call path,
   * served on an in-process media line instead of a socket, so no number is dialled.
   */
  readonly startTestCall: (
    principal: Principal,
    workflowId: number,
    input: {
      readonly initial_context?: Readonly<Record<string, unknown>> | undefined
      readonly use_draft?: boolean | undefined
    }
  ) => Effect.Effect<TestCall, NotFound | Conflict | ValidationFailed | Forbidden>
  /**
   * A carrier's incoming-call webhook for one telephony configuration: verified, routed by the
   * called number to its agent, answered with media-stream markup for a new inbound run.
   */
  readonly inbound: (
    provider: Provider,
    configurationId: number,
    request: WebhookRequest
  ) => Effect.Effect<{ readonly contentType: string; readonly body: string }, Forbidden | NotFound>
  /**
   * A carrier's report on a cold transfer of the run's call (signed by the run's telephony
   * configuration): settles the waiting transfer; answers what the carrier runs next, if anything.
   */
  readonly transferEvent: (
    provider: Provider,
    runId: number,
    request: WebhookRequest
  ) => Effect.Effect<{ readonly contentType: string; readonly body: string }, Forbidden>
  /** The instructions a carrier fetches to carry out a transfer (Plivo's `aleg_url`). */
  readonly transferMarkup: (
    provider: Provider,
    runId: number,
    request: WebhookRequest
  ) => Effect.Effect<{ readonly contentType: string; readonly body: string }, Forbidden | NotFound>
}

export class VoiceCalls extends Context.Tag("talkgraph/VoiceCalls")<VoiceCalls, VoiceCallsShape>() {}
