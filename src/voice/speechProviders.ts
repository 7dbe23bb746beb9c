export const SPEECH_TO_TEXT_PROVIDERS = ["deepgram", "openai"] as const
export const TEXT_TO_SPEECH_PROVIDERS = ["elevenlabs", "cartesia", "deepgram", "openai", "local"] as const

interface SpeechSettingProblem {
  readonly field: "provider" | "api_key"
  readonly message: string
}

/**
 * Why a speech setting can never work, checked when it is saved (and again before a campaign
 * starts, for settings saved before the check existed): a provider we do not speak, or a
 * provider's own API without a key. An endpoint of the organization's own (`base_url`: a local
 * Whisper server, a proxy) may need none; the offline `local` voice needs neither.
 */
export const speechSettingProblems = (
  kind: "stt" | "tts",
  section: { readonly provider: string; readonly base_url: string | null; readonly hasKey: boolean }
): Array<SpeechSettingProblem> => {
  const providers: ReadonlyArray<string> = kind === "stt" ? SPEECH_TO_TEXT_PROVIDERS : TEXT_TO_SPEECH_PROVIDERS
  if (!providers.includes(section.provider)) {
    return [{
      field: "provider",
      message: `"${section.provider}" is not a ${kind === "stt" ? "speech-to-text" : "text-to-speech"} provider; use ${
        providers.join(", ")
      }`
    }]
  }
  if (section.provider !== "local" && section.base_url === null && !section.hasKey) {
    return [{
      field: "api_key",
      message:
        `api_key is required for ${section.provider}'s own API; an endpoint of your own (base_url) may go without one`
    }]
  }
  return []
}
