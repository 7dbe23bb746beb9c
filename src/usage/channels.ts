/**
 * Runs are reported by channel, a group of modes (spec "List runs with usage", `callChannel`).
 * Whatever writes a run derives its `channel` column from its mode with `channelOfMode`, so the
 * report filters on an indexed column and the grouping is defined only here.
 */
export const channels = ["telephony", "web", "chat"] as const
export type Channel = (typeof channels)[number]

/**
 * The modes of agent tests' conversations with a simulated caller, billed and reported as test
 * runs: a text chat, or a voice call on the in-process line (a web call, like the browser's).
 */
export const testChatMode = "testchat"
export const testCallMode = "testcall"
export const testModes = [testChatMode, testCallMode] as const

const webModes: ReadonlySet<string> = new Set(["webrtc", "smallwebrtc", testCallMode])
const chatModes: ReadonlySet<string> = new Set(["textchat", testChatMode])

/** twilio, vonage, telnyx, plivo and any other carrier are telephony; browsers are web; text (tests too) is chat. */
export const channelOfMode = (mode: string): Channel => {
  const normalized = mode.trim().toLowerCase()
  if (webModes.has(normalized)) return "web"
  if (chatModes.has(normalized)) return "chat"
  return "telephony"
}

export const isChannel = (value: string): value is Channel => (channels as ReadonlyArray<string>).includes(value)
