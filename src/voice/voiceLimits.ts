export const DEFAULT_VOICE_IDLE_SECONDS = 30

/**
 * Seconds a call may stay silent (nobody speaking, the agent waiting) before it is ended with
 * `idle_timeout`: a version's `voice_idle_timeout_seconds`, or the established platform's
 * `max_user_idle_timeout`; clamped to 3–3600.
 */
export const voiceIdleSeconds = (configurations: Readonly<Record<string, unknown>> | null): number => {
  const value = configurations?.["voice_idle_timeout_seconds"] ?? configurations?.["max_user_idle_timeout"]
  return typeof value === "number" && Number.isFinite(value)
    ? Math.min(3600, Math.max(3, value))
    : DEFAULT_VOICE_IDLE_SECONDS
}
