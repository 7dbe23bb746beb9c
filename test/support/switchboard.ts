import { expect } from "vitest"
import { newAccount } from "./accounts.ts"
import type { CalleeScript } from "./calleeScript.ts"
import type { Client } from "./client.ts"
import { carrierTelephony } from "./dialerFixtures.ts"
import { useVoiceModels } from "./voiceFixtures.ts"
import type { WebhookReceiver } from "./webhookReceiver.ts"

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

/**
 * A new organization whose calls use the loopback voice providers and `standIn`'s telephony;
 * with `receiver`, its `call.transfer` events are sent there (signed with the endpoint's secret).
 */
export const transferAccount = async (
  api: Client,
  voice: Parameters<typeof useVoiceModels>[2],
  standIn: Parameters<typeof carrierTelephony>[2],
  receiver: WebhookReceiver | null
) => {
  const account = await newAccount(api)
  await useVoiceModels(api, account, voice)
  await carrierTelephony(api, { token: account.token }, standIn)
  if (receiver !== null) {
    const endpoint = await api.post("/api/v1/webhooks", { url: receiver.url, event_types: ["call.transfer"] }, {
      token: account.token
    })
    expect(endpoint.status).toBe(200)
    receiver.useSecret(endpoint.body.secret)
  }
  return account
}
