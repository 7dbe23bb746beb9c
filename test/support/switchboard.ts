import type { CalleeScript } from "./calleeScript.ts"

/**
 * A one-key switchboard agent for call-control tests: its greeting asks for a key, the key is
 * collected and the model calls the given tool.
 */
const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

export const switchboardDefinition = (toolUuid: string, greeting: string, prompt: string) => ({
  nodes: [
    node("start", "startCall", {
      name: "Switchboard",
      greeting,
      prompt,
      collect_digits: { max_digits: 1 },
      tool_uuids: [toolUuid]
    }),
    node("end", "endCall", { name: "End", prompt: "Say goodbye." })
  ],
  edges: [{ id: "e1", source: "start", target: "end", data: { label: "Done", condition: "The caller is done" } }]
})

/**
 * The caller presses a key after the greeting, then listens until the agent has been quiet a
 * while (or the line is handed over). The quiet is long enough for a transfer that rings on a
 * busy machine: hanging up sooner would end the call before the transfer's outcome.
 */
export const keyThenListen = (key: string): CalleeScript => [
  { waitForAgent: { quietMs: 600 } },
  { dtmf: key },
  { waitForAgent: { quietMs: 2500, timeoutMs: 15_000 } },
  { hangUp: true }
]
