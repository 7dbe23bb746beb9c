import { Context, type Effect, type Option, Schema } from "effect"
import type { AnsweredBy } from "../src/campaigns/machineVerdict.ts"
import type { CallOutcome } from "../src/campaigns/retryPolicy.ts"
import { carrierProviders, type Provider } from "../src/telephony/providerConfig.ts"
import type { TransferEndpoint } from "../src/tools/transferDestination.ts"

export type { AnsweredBy, Provider, TransferEndpoint }

/** How a cold transfer's destination answered the carrier's ring. */
export type TransferOutcome = "answered" | "busy" | "no_answer" | "failed"

/** A live call handed to another party by the carrier (a cold transfer). */
export interface TransferRequest {
  readonly endpoint: TransferEndpoint
  /** How long the destination rings before the transfer is given up. */
  readonly timeoutSeconds: number
  /** Where the carrier reports the destination's answer (signed like every callback of the call). */
  readonly eventUrl: string
  /** Where a carrier that fetches the call's new instructions (Plivo's `aleg_url`) gets them. */
  readonly markupUrl: string
}

/**
 * A warm transfer's second call: the destination rung from the line the caller is on, briefed with
 * `whisper` once it answers, then joined with the caller in `room` (conference or bridge). The
 * caller stays with the agent's media stream until then.
 */
export interface WarmTransferRequest {
  readonly endpoint: TransferEndpoint
  /** The account's number the call comes from: the one the caller's call is on. */
  readonly from: string
  readonly timeoutSeconds: number
  readonly whisper: string
  /** Where the carrier reports the destination leg's progress (signed like every callback of the call). */
  readonly eventUrl: string
  /**
   * Where a carrier that fetches instructions (Plivo's `answer_url` and `aleg_url`) gets them:
   * with `?part=destination` the destination's, with `?part=caller&room=…` the caller's.
   */
  readonly markupUrl: string
  /** The conference the caller and the destination meet in, unique to the transfer. */
  readonly room: string
}

/** How a warm transfer's destination leg goes, as its callbacks say. */
export type WarmStep =
  /** The destination picked up; it has not heard the whisper yet. */
  | { readonly _tag: "Answered"; readonly legId: string }
  /** The destination heard the whisper and waits for the caller; null: the callback names no call (Vonage's `notify`). */
  | { readonly _tag: "Briefed"; readonly legId: string | null }
  /** The leg is over before the caller was joined: why it did not go through. */
  | { readonly _tag: "Ended"; readonly legId: string; readonly outcome: Exclude<TransferOutcome, "answered"> }

/** A carrier's warm transfer, built from its own call-placing and conferencing APIs. */
export interface WarmTransferAdapter<R = never> {
  /** Places the destination's leg; the whisper is part of its instructions where the carrier takes them with the call. */
  readonly dial: (
    account: CarrierAccount,
    request: WarmTransferRequest
  ) => Effect.Effect<{ readonly legId: string }, CarrierUnavailable, R>
  readonly parseEvent: (request: WebhookRequest) => Option.Option<WarmStep>
  /**
   * Says the whisper to the answered destination, on carriers whose dial cannot carry it (Telnyx:
   * `speak`, then `call.speak.ended` is the briefing's end); null where the dial's instructions say it.
   */
  readonly brief:
    | ((
      account: CarrierAccount,
      legId: string,
      request: WarmTransferRequest
    ) => Effect.Effect<void, CarrierUnavailable, R>)
    | null
  /** Joins the caller with the briefed destination: the caller's stream with the agent ends. */
  readonly join: (
    account: CarrierAccount,
    caller: PlacedCallRef,
    legId: string,
    request: WarmTransferRequest
  ) => Effect.Effect<void, CarrierUnavailable, R>
  /** What the leg's callbacks are answered with. */
  readonly eventReply: { readonly contentType: string; readonly body: string }
  /**
   * The instructions fetched from `markupUrl`, on carriers that fetch them (null on the others):
   * the destination's while it is rung, the caller's (the conference `room`, named in the URL,
   * which the carrier's signature covers) once the transfer is settled.
   */
  readonly markup: {
    readonly destination: (request: WarmTransferRequest) => { readonly contentType: string; readonly body: string }
    readonly caller: (room: string) => { readonly contentType: string; readonly body: string }
  } | null
}

export const Providers: ReadonlyArray<Provider> = carrierProviders

/** A telephony configuration with its credentials decrypted: only ever held in memory. */
export interface CarrierAccount {
  readonly configurationId: number
  readonly provider: Provider
  /** The provider's public API unless the configuration points elsewhere (regional edge, local stand-in). */
  readonly apiBaseUrl: string | null
  readonly credentials: Readonly<Record<string, string>>
  readonly machineDetection: boolean
}

export interface OutboundCall {
  readonly to: string
  readonly from: string
  /** Where the provider fetches the call's instructions (the media-stream markup). */
  readonly answerUrl: string
  readonly statusCallbackUrl: string
  readonly timeLimitSeconds: number
  /** The signed media-stream URL, for providers that take it when dialling (Telnyx) rather than from an answer URL. */
  readonly mediaStreamUrl?: string
}

/** A provider webhook as received, with the public URL the provider called (signatures cover it). */
export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly rawBody: string
}

/** A call's progress as a provider reports it; `outcome` is set only once the call is over. */
export interface CallStatus {
  /** The id the placement returned, which binds the report to the attempt that placed the call. */
  readonly providerCallId: string
  readonly outcome: CallOutcome | null
  readonly durationSeconds: number | null
  /** The far end picked up (a progress event, before any outcome). */
  readonly answered?: boolean
  /**
   * The carrier's id of the live call where it is not the placement's (Plivo answers a request
   * UUID, then calls back with the call's own CallUUID): what hanging up and status lookups take.
   */
  readonly liveCallId?: string
  /**
   * Answering-machine detection's verdict. A progress event where the carrier decides while the
   * call goes on (Vonage, Telnyx, Plivo): the call's end, reported later, says `completed`.
   */
  readonly answeredBy?: AnsweredBy
}

/** A placed call as the carrier knows it: the placement's id, and the live call's once a callback named it. */
export interface PlacedCallRef {
  readonly providerCallId: string
  readonly liveCallId: string | null
}

export interface IncomingCall {
  readonly providerCallId: string
  readonly from: string
  readonly to: string
}

export class CallNotPlaced extends Schema.TaggedError<CallNotPlaced>()("CallNotPlaced", {
  message: Schema.String,
  /** The provider refused this call (bad number, auth): retrying the same request will not help. */
  permanent: Schema.Boolean,
  /** The carrier's documented answer that the caller ID (`from`) is invalid or not verified for this account. */
  callerIdRefused: Schema.optional(Schema.Boolean)
}) {}

export class CarrierUnavailable extends Schema.TaggedError<CarrierUnavailable>()("CarrierUnavailable", {
  message: Schema.String
}) {}

/**
 * One provider's protocol: placing and ending calls, and reading its webhooks. `R` is what its
 * REST calls need (the outbound client); `Telephony` hands out adapters with it provided.
 */
export interface CarrierAdapter<R = never> {
  readonly placeCall: (
    account: CarrierAccount,
    call: OutboundCall
  ) => Effect.Effect<{ readonly providerCallId: string }, CallNotPlaced, R>
  /** Ends the call, or cancels it before it is answered; a call already over is not an error. */
  readonly hangUp: (account: CarrierAccount, call: PlacedCallRef) => Effect.Effect<void, CarrierUnavailable, R>
  /** Asks the provider where a call stands, for calls whose final event never arrived. */
  readonly callStatus: (
    account: CarrierAccount,
    call: PlacedCallRef
  ) => Effect.Effect<CallStatus, CarrierUnavailable, R>
  /** Whether the provider signed the request; signatures that expire are checked against `Clock`. */
  readonly verifyWebhook: (account: CarrierAccount, request: WebhookRequest) => Effect.Effect<boolean>
  readonly parseStatusCallback: (request: WebhookRequest) => Option.Option<CallStatus>
  /** An incoming call as the provider announces it (the answer webhook of a number); none when it is not one. */
  readonly parseIncomingCall: (request: WebhookRequest) => Option.Option<IncomingCall>
  /** The answer document that connects the call's audio to `streamUrl`. */
  readonly answerMarkup: (streamUrl: string) => { readonly contentType: string; readonly body: string }
  /** Asks the carrier to ring `request.endpoint` and bridge the live call to it when it answers. */
  readonly transfer: (
    account: CarrierAccount,
    call: PlacedCallRef,
    request: TransferRequest
  ) => Effect.Effect<void, CarrierUnavailable, R>
  /** A transfer callback's outcome; none for progress the transfer does not end on (ringing, …). */
  readonly parseTransferEvent: (request: WebhookRequest) => Option.Option<TransferOutcome>
  /**
   * What a transfer callback is answered with (the XML carriers run it once their `<Dial>` is
   * over): `returnStreamUrl`, when given, connects the caller back to the agent's media stream.
   */
  readonly transferEventReply: (returnStreamUrl: string | null) => {
    readonly contentType: string
    readonly body: string
  }
  /** A transfer that was not answered can bring the caller back to the agent on a new media stream. */
  readonly returnsAfterTransfer: boolean
  /** The instructions a carrier fetches for a transfer (`markupUrl`), with the request it was built from. */
  readonly transferMarkup: (request: Omit<TransferRequest, "markupUrl">) => {
    readonly contentType: string
    readonly body: string
  }
  /**
   * The agent's media stream goes on while the destination rings and after it did not answer
   * (Telnyx's transfer is a command beside the call's stream); the others replace the call's
   * instructions, which ends the stream.
   */
  readonly streamSurvivesTransfer: boolean
  /** Warm transfer, where this adapter carries it out; absent: only cold transfers. */
  readonly warm?: WarmTransferAdapter<R>
}

export interface TelephonyShape {
  readonly adapter: (provider: Provider) => CarrierAdapter
}

export class Telephony extends Context.Tag("talkgraph/Telephony")<Telephony, TelephonyShape>() {}
