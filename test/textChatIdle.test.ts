import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount } from "./support/accounts.ts"
import { createWorkflow, salesDefinition, useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm

beforeAll(async () => {
  llm = await startScriptedLlm()
  server = await startServer({ TALKGRAPH_CHAT_IDLE_TIMEOUT_SECONDS: "2" })
  api = client(server.url)
})

afterAll(async () => {
  await server?.close()
  await llm?.close()
})

const waitFor = async <T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

describe("text chat session lifetime", () => {
  it("ends a session that stays idle past the configured timeout, with a disposition", async () => {
    const account = await newAccount(api, "idle")
    await useLlm(api, account, llm.baseUrl)
    const workflowId = await createWorkflow(api, server, account, salesDefinition(), {
      dispositionCodes: ["NO_RESPONSE", "QUALIFIED"]
    })
    const created = await api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions`, {}, { token: account.token })
    expect(created.status).toBe(200)
    llm.enqueue(reply.json({ call_disposition: "User went quiet", mapped_call_disposition: "NO_RESPONSE" }))
    const path = `/api/v1/workflow/${workflowId}/text-chat/sessions/${created.body.workflow_run_id}`
    const ended = await waitFor(() => api.get(path, { token: account.token }), (read) => read.body.state !== "running")
    expect(ended.body).toMatchObject({ state: "completed", end_reason: "idle_timeout" })
    expect(ended.body.gathered_context).toEqual({
      call_disposition: "User went quiet",
      mapped_call_disposition: "NO_RESPONSE"
    })
    expect(ended.body.ended_at).not.toBeNull()
    const late = await api.post(`${path}/messages`, { text: "still there?" }, { token: account.token })
    expect(late.status).toBe(409)
    expect(late.body.detail).toContain("idle_timeout")
  })

  it("leaves the transcript untouched and the session usable when a streamed reply is interrupted", async () => {
    const account = await newAccount(api, "interrupt")
    await useLlm(api, account, llm.baseUrl)
    const workflowId = await createWorkflow(api, server, account, salesDefinition())
    const created = await api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions`, {}, { token: account.token })
    const path = `/api/v1/workflow/${workflowId}/text-chat/sessions/${created.body.workflow_run_id}`
    llm.enqueue(reply.content("This is a long answer that the user will not wait for", { chunkDelayMs: 150 }))
    const abort = new AbortController()
    const response = await fetch(`${server.url}${path}/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${account.token}`,
        "content-type": "application/json",
        accept: "text/event-stream"
      },
      body: JSON.stringify({ text: "Tell me everything" }),
      signal: abort.signal
    })
    const reader = response.body!.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toContain("event: token")
    abort.abort()

    llm.enqueue(reply.content("Short answer."))
    const next = await waitFor(
      () => api.post(`${path}/messages`, { text: "Just the short version" }, { token: account.token }),
      (answer) => answer.status !== 409
    )
    expect(next.status).toBe(200)
    expect(next.body.transcript.map((turn: any) => turn.text)).toEqual([
      "Hi there, this is !",
      "Just the short version",
      "Short answer."
    ])
  })
})
