import type { TestAccount } from "./accounts.ts"
import type { Client, Credentials } from "./client.ts"

const MODELS = "/api/v1/organizations/model-configurations"

/**
 * The model settings a campaign needs before it may start, for tests of dialing whose calls never
 * connect their audio: closed loopback ports and the offline voice. An organization that has its
 * own settings keeps them.
 */
export const ensureVoiceModels = async (api: Client, credentials: Credentials) => {
  const current = await api.get(MODELS, credentials)
  if (current.body?.llm && current.body?.stt && current.body?.tts) return
  const reply = await api.put(MODELS, {
    llm: { provider: "openai", model: "unused", base_url: "http://127.0.0.1:9/v1" },
    stt: { provider: "deepgram", api_key: "dg-unused-key-0000", base_url: "http://127.0.0.1:9" },
    tts: { provider: "local" }
  }, credentials)
  if (reply.status !== 200) throw new Error(`model configuration failed: ${reply.status} ${JSON.stringify(reply.body)}`)
}

/** Points the organization's LLM, STT (Deepgram live) and TTS at loopback stand-ins through the real endpoint. */
export const useVoiceModels = async (
  api: Client,
  account: TestAccount,
  stand: {
    readonly llmUrl: string
    readonly deepgram: { readonly url: string; readonly apiKey: string }
    readonly tts: { readonly url: string; readonly apiKey: string }
  }
) => {
  const reply = await api.put(
    MODELS,
    {
      llm: { provider: "openai", model: "scripted-model", api_key: "sk-test-key-123456", base_url: stand.llmUrl },
      stt: {
        provider: "deepgram",
        model: "nova-3",
        api_key: stand.deepgram.apiKey,
        base_url: stand.deepgram.url,
        language: "en"
      },
      tts: {
        provider: "elevenlabs",
        model: "eleven_flash_v2_5",
        api_key: stand.tts.apiKey,
        base_url: stand.tts.url,
        voice: "test-voice"
      }
    },
    { token: account.token }
  )
  if (reply.status !== 200) throw new Error(`model configuration failed: ${reply.status} ${JSON.stringify(reply.body)}`)
}

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

/**
 * greeting → qualify (interruptible, extracts the budget) → end. Tools: start offers
 * `interested`; qualify offers `budget_known`.
 */
export const voiceDefinition = (options: { readonly allowInterrupt?: boolean } = {}) => ({
  nodes: [
    node("start", "startCall", {
      name: "Start",
      greeting: "Hi {{first_name | there}}, this is Acme calling about solar panels.",
      prompt: "Ask whether the caller is interested."
    }),
    node("qualify", "agentNode", {
      name: "Qualify",
      prompt: "Ask about their budget.",
      allow_interrupt: options.allowInterrupt ?? true,
      extraction_enabled: true,
      extraction_prompt: "Budget in US dollars.",
      extraction_variables: [{ name: "budget", type: "number", prompt: "Budget in USD" }]
    }),
    node("end", "endCall", { name: "End", prompt: "Thank them and say goodbye." })
  ],
  edges: [
    {
      id: "e1",
      source: "start",
      target: "qualify",
      data: { label: "Interested", condition: "The caller wants to hear more" }
    },
    { id: "e2", source: "qualify", target: "end", data: { label: "Budget known", condition: "The budget is known" } }
  ]
})
