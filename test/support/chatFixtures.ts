import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { EventStreamDecoder } from "../../layers/llm/eventStreamDecoder.ts"
import type { TestAccount } from "./accounts.ts"
import type { Client } from "./client.ts"
import type { RunningServer } from "./server.ts"

/** Points the account's organization at the scripted LLM through the real model-configuration endpoint. */
export const useLlm = async (api: Client, account: TestAccount, baseUrl: string) => {
  const reply = await api.put(
    "/api/v1/organizations/model-configurations",
    { llm: { provider: "openai", model: "scripted-model", api_key: "sk-test-key-123456", base_url: baseUrl } },
    { token: account.token }
  )
  if (reply.status !== 200) throw new Error(`model configuration failed: ${reply.status} ${JSON.stringify(reply.body)}`)
}

interface WorkflowOptions {
  readonly templateContextVariables?: Record<string, unknown>
  readonly configurations?: Record<string, unknown>
  readonly dispositionCodes?: ReadonlyArray<string>
}

/** Creates (and publishes) a workflow through `POST /api/v1/workflow/create/definition`. */
export const createWorkflow = async (
  api: Client,
  server: RunningServer,
  account: TestAccount,
  definition: unknown,
  options: WorkflowOptions = {}
): Promise<number> => {
  const reply = await api.post(
    "/api/v1/workflow/create/definition",
    {
      name: "Chat agent",
      workflow_definition: definition,
      ...(options.templateContextVariables ? { template_context_variables: options.templateContextVariables } : {}),
      ...(options.configurations ? { workflow_configurations: options.configurations } : {})
    },
    { token: account.token }
  )
  if (reply.status !== 200) throw new Error(`workflow creation failed: ${reply.status} ${JSON.stringify(reply.body)}`)
  const id: number = reply.body.id
  if (options.dispositionCodes) {
    await server.run(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE workflows SET call_disposition_codes = ${
          JSON.stringify({ disposition_codes: options.dispositionCodes })
        }::jsonb WHERE id = ${id}`
      })
    )
  }
  return id
}

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

/**
 * start → qualify → end, plus a global prompt. Tools: start offers `interested` and `end_call`;
 * qualify offers `budget_known__done` and `end_call`.
 */
export const salesDefinition = (
  overrides: { readonly greeting?: string; readonly transitionSpeech?: string } = {}
) => ({
  nodes: [
    node("start", "startCall", {
      name: "Start",
      greeting: overrides.greeting ?? "Hi {{first_name | there}}, this is {{company}}!",
      prompt: "You sell {{product}} for {{company}}. Ask whether {{first_name | the caller}} is interested."
    }),
    node("qualify", "agentNode", {
      name: "Qualify",
      prompt: "Ask about their budget.",
      extraction_enabled: true,
      extraction_prompt: "Budget in US dollars.",
      extraction_variables: [
        { name: "budget", type: "number", prompt: "Budget in USD" },
        { name: "decision_maker", type: "boolean", prompt: "Whether they decide" }
      ]
    }),
    node("end", "endCall", { name: "End", prompt: "Thank them and say goodbye." }),
    node("global", "globalNode", { name: "Global", prompt: "Be brief. Company: {{company}}." })
  ],
  edges: [
    {
      id: "e1",
      source: "start",
      target: "qualify",
      data: {
        label: "Interested",
        condition: "The caller wants to hear more",
        ...(overrides.transitionSpeech ? { transition_speech: overrides.transitionSpeech } : {})
      }
    },
    {
      id: "e2",
      source: "qualify",
      target: "end",
      data: { label: "Budget known / done", condition: "The budget is known" }
    }
  ]
})

/** Reads server-sent events from a fetch response into `{event, data}` frames. */
export const readEvents = async (response: Response) => {
  const decoder = new EventStreamDecoder()
  const events = [...decoder.push(await response.text()), ...decoder.end()]
  return events.map((event) => ({ event: event.event, data: JSON.parse(event.data) }))
}
