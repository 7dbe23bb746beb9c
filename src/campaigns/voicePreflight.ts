import { Config } from "effect"
import { classifyAddress, isLoopbackName } from "../outbound/addressRanges.ts"
import { speechSettingProblems } from "../voice/speechProviders.ts"

/** A stored speech setting as far as deciding whether it can work goes. */
export interface SpeechSetting {
  readonly provider: string
  readonly base_url: string | null
  readonly hasKey: boolean
}

interface StorageSetup {
  /** `DATABASE_URL` is set: several processes may share the work. */
  readonly sharedDatabase: boolean
  /** `STORAGE_URL` is a local directory. */
  readonly localStorage: boolean
  /** `TALKGRAPH_LOCAL_STORAGE_SHARED`: the operator says every process sees that same directory. */
  readonly localStorageShared: boolean
}

interface VoicePreflight {
  readonly llm: boolean
  readonly stt: SpeechSetting | null
  readonly tts: SpeechSetting | null
  readonly publicUrl: string
  readonly carrier: { readonly provider: string; readonly apiBaseUrl: string }
  readonly storage: StorageSetup
}

/** Loopback or another internal address (by literal address, or `localhost`); null for a public one or a name. */
const internalHost = (url: string): "loopback" | "internal" | null => {
  let host: string
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, "")
  } catch {
    return null
  }
  if (isLoopbackName(host)) return "loopback"
  const classified = classifyAddress(host)
  if (classified === null || classified.class === "public") return null
  return classified.class === "loopback" ? "loopback" : "internal"
}

/**
 * Why a carrier could not call this service back at PUBLIC_URL (answer documents, status
 * callbacks, media streams): it is a loopback or internal address. A carrier API that is itself
 * on loopback or an internal network (a local stand-in, an on-premises gateway) can reach such an
 * address, so it may.
 */
export const publicUrlProblem = (
  publicUrl: string,
  carrier: { readonly provider: string; readonly apiBaseUrl: string }
): string | null => {
  const own = internalHost(publicUrl)
  if (own === null || internalHost(carrier.apiBaseUrl) !== null) return null
  return `PUBLIC_URL is ${publicUrl}, ${
    own === "loopback" ? "a loopback address" : "an internal address"
  } ${carrier.provider} cannot reach ` +
    "for its callbacks and media streams: set PUBLIC_URL to this service's public https address (a tunnel will do to try it out)"
}

/**
 * Why recordings and clips could go missing: local storage while several processes may share the
 * work, each writing to a directory of its own. One process, or a directory every process mounts,
 * is fine, and the operator says so with TALKGRAPH_LOCAL_STORAGE_SHARED.
 */
export const storageProblem = (storage: StorageSetup): string | null =>
  storage.sharedDatabase && storage.localStorage && !storage.localStorageShared
    ? "STORAGE_URL is a local directory while DATABASE_URL lets several processes share the calls, so one process cannot read " +
      "the recordings and clips another wrote: use STORAGE_URL=s3://…, or set TALKGRAPH_LOCAL_STORAGE_SHARED=true when there is " +
      "one process or every process mounts the same directory"
    : null

const speechProblems = (kind: "stt" | "tts", setting: SpeechSetting | null): Array<string> => {
  const what = kind === "stt" ? "speech-to-text (stt)" : "text-to-speech (tts)"
  if (setting === null) return [`the organization has no ${what} configured`]
  return speechSettingProblems(kind, setting).map((problem) => `its ${what} setting cannot work: ${problem.message}`)
}

/**
 * Everything that would make every call of a campaign fail, checked before it dials: without an
 * LLM, STT and TTS the agent cannot speak (answered calls would get a refused media stream), the
 * carrier must be able to call back, and recordings must land where every process finds them.
 */
export const voicePreflightProblems = (input: VoicePreflight): Array<string> => [
  ...(input.llm ? [] : ["the organization has no LLM configured"]),
  ...speechProblems("stt", input.stt),
  ...speechProblems("tts", input.tts),
  ...[publicUrlProblem(input.publicUrl, input.carrier), storageProblem(input.storage)].filter((
    problem
  ): problem is string => problem !== null)
]

/** `TALKGRAPH_LOCAL_STORAGE_SHARED` (default false): see `storageProblem`. */
export const localStorageSharedConfig = Config.boolean("TALKGRAPH_LOCAL_STORAGE_SHARED").pipe(Config.withDefault(false))
