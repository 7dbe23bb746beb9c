import type { Schemas } from "../api/client.ts"
import { agentPlayout } from "./agentPlayout.ts"
import { openMicrophone } from "./microphone.ts"

/** What the server tells the page about the conversation (src/telephony/media/browser.ts documents each). */
export type CallProgress =
  | {
    readonly event: "transcript"
    readonly role: "user" | "assistant"
    readonly text: string
    readonly node_id: string
    readonly interrupted: boolean
    readonly latency_ms?: number
  }
  | ({ readonly event: "tool_call" } & Schemas["ToolCallTaken"])
  | { readonly event: "node"; readonly node_id: string }

export interface CallListener {
  readonly onProgress: (progress: CallProgress) => void
  /** The server dropped the agent's queued audio: the caller spoke over it. */
  readonly onCleared: () => void
  readonly onSpeaking: (speaking: boolean) => void
  /** The call is over: the caller hung up, the server ended it, or it never connected. */
  readonly onEnded: (by: "caller" | "server" | "unconnected") => void
}

export interface BrowserCall {
  readonly hangUp: () => void
  /** A key of the page's keypad, as a phone's keypad sends it (the agent hears it as the caller's keypad). */
  readonly pressKey: (key: string) => void
}

const isProgress = (message: { readonly event?: unknown }): message is CallProgress =>
  message.event === "transcript" || message.event === "tool_call" || message.event === "node"

/**
 * One browser test call on its media WebSocket: the microphone out as PCM16 16 kHz, the agent's
 * packets played as they come, each `mark` answered with `played` once heard, `clear` obeyed at once.
 */
export const connectBrowserCall = async (mediaUrl: string, listener: CallListener): Promise<BrowserCall> => {
  const context = new AudioContext()
  // Connected once the microphone is open; until then what it captures goes nowhere.
  const connection: { socket?: WebSocket } = {}
  const send = (message: string | ArrayBufferLike) => {
    if (connection.socket?.readyState === WebSocket.OPEN) connection.socket.send(message)
  }
  const playout = agentPlayout(context, (name) => send(JSON.stringify({ event: "played", name })))
  // The microphone first: a refusal ends the attempt before the call is connected.
  const microphone = await openMicrophone(context, (pcm) => send(pcm.buffer)).catch((error: unknown) => {
    void context.close()
    throw error instanceof DOMException && error.name === "NotAllowedError"
      ? new Error("The browser was not allowed to use the microphone: allow it for this page and call again.")
      : error
  })
  // Autoplay rules may leave a context created after an await suspended.
  await context.resume()
  const media = new WebSocket(mediaUrl)
  media.binaryType = "arraybuffer"
  connection.socket = media
  let opened = false

  let speaking = false
  const watch = setInterval(() => {
    if (playout.speaking() === speaking) return
    speaking = !speaking
    listener.onSpeaking(speaking)
  }, 100)

  let ended = false
  const end = (by: "caller" | "server" | "unconnected") => {
    if (ended) return
    ended = true
    clearInterval(watch)
    microphone.close()
    playout.close()
    void context.close()
    listener.onSpeaking(false)
    listener.onEnded(by)
  }

  media.onopen = () => {
    opened = true
    send(JSON.stringify({ event: "start" }))
  }
  media.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
    if (typeof event.data !== "string") {
      playout.play(new Int16Array(event.data))
      return
    }
    const message = JSON.parse(event.data) as { readonly event?: unknown; readonly name?: unknown }
    if (message.event === "mark" && typeof message.name === "string") playout.mark(message.name)
    else if (message.event === "clear") {
      playout.clear()
      listener.onCleared()
    } else if (isProgress(message)) listener.onProgress(message)
  }
  media.onclose = () => end(opened ? "server" : "unconnected")

  return {
    pressKey: (key) => send(JSON.stringify({ event: "dtmf", digit: key })),
    hangUp: () => {
      send(JSON.stringify({ event: "stop" }))
      media.close()
      end("caller")
    }
  }
}
