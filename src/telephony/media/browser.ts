import type { TranscriptTurn } from "../../conversation/transcript.ts"
import { framedOutput } from "./framedOutput.ts"
import { dtmf, linear16Audio, played } from "./inboundEvents.ts"
import { jsonObject, linear16FromPcm, objectField, stringEntries, stringField } from "./mediaFrames.ts"
import type { InboundMedia, MediaProtocol } from "./mediaProtocol.ts"

/**
 * Our own browser test call, shaped like Vonage's framing so one pipeline serves both.
 *
 * Audio, both ways: binary WebSocket messages of mono PCM16, little-endian, 16 kHz. The page may
 * send any length (an AudioWorklet's 128-sample quanta are fine); the server sends 20 ms packets
 * of 320 samples (640 bytes) and the page plays them in order, queued.
 *
 * Control: JSON text messages.
 *   page → server  {"event":"start","parameters":{…string values…}}  first message; parameters optional
 *                  {"event":"played","name":"…"}   the page has played every packet received before
 *                                                 the mark of that name (or dropped it on a clear)
 *                  {"event":"dtmf","digit":"5"}    a key on the page's keypad
 *                  {"event":"stop"}                the user hung up (closing the socket also ends the call)
 *   server → page  {"event":"mark","name":"…"}     answer with "played" once the audio before it has played
 *                  {"event":"clear"}               drop all queued audio now, and answer every pending mark
 *                  {"event":"transcript","role":"user"|"assistant","text":"…","node_id":"…",
 *                   "interrupted":true|false,"latency_ms":…,"start_ms":…,"end_ms":…}
 *                                                 a turn, as the run's transcript records it: the caller's
 *                                                 once answered, the agent's once played (or cut short,
 *                                                 `interrupted` and only what was heard); `latency_ms` on
 *                                                 an agent turn answering the caller is from the end of
 *                                                 their speech to the agent's first audio; the times are
 *                                                 absent when unknown
 *                  {"event":"tool_call","name":"…","from_node_id":"…","edge_id":"…"|null,"to_node_id":"…"|null}
 *                                                 the agent followed an edge (or called end_call: nulls)
 *                  {"event":"node","node_id":"…"}  the graph node the conversation is on: at the start,
 *                                                 then after each recorded step
 */
const PACKET_SAMPLES = 320

const transcriptMessage = (turn: TranscriptTurn) =>
  JSON.stringify({
    event: "transcript",
    role: turn.role,
    text: turn.text,
    node_id: turn.node_id,
    interrupted: turn.interrupted === true,
    latency_ms: turn.latency_ms,
    start_ms: turn.start_ms,
    end_ms: turn.end_ms
  })

export const browserMediaProtocol = (): MediaProtocol => {
  const receive = (message: string | Uint8Array): ReadonlyArray<InboundMedia> => {
    if (typeof message !== "string") return linear16Audio(message)
    const json = jsonObject(message)
    switch (stringField(json, "event")) {
      case "start":
        return [{
          _tag: "Started",
          streamId: null,
          callId: null,
          parameters: stringEntries(objectField(json, "parameters"))
        }]
      case "played":
        return played(stringField(json, "name"))
      case "dtmf":
        return dtmf(stringField(json, "digit"))
      case "stop":
        return [{ _tag: "Stopped" }]
      default:
        return []
    }
  }

  return {
    sampleRate: 16000,
    receive,
    ...framedOutput({
      packetSamples: PACKET_SAMPLES,
      packet: linear16FromPcm,
      mark: (name) => JSON.stringify({ event: "mark", name }),
      clear: () => JSON.stringify({ event: "clear" })
    }),
    progress: ({ nodeId, toolCalls, turns }) => {
      // The tools were called answering the caller: told after their words, before the agent's.
      const answered = turns.map((turn) => turn.role).lastIndexOf("user") + 1
      return [
        ...turns.slice(0, answered).map(transcriptMessage),
        ...toolCalls.map((call) => JSON.stringify({ event: "tool_call", ...call })),
        ...turns.slice(answered).map(transcriptMessage),
        JSON.stringify({ event: "node", node_id: nodeId })
      ]
    }
  }
}
