import { type FormEvent, useEffect, useRef, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { messageOf, ok, problemOf } from "../api/problems.ts"
import { readEventStream } from "./eventStream.ts"

type ChatSession = Schemas["TextChatSessionResponse"]

interface Turn {
  readonly role: "user" | "assistant"
  readonly text: string
  readonly nodeId?: string
  readonly latencyMs?: number
}

/**
 * "Try it": a text conversation with the agent's draft (else its published version), the reply
 * streamed token by token; the node the conversation is on is reported so the graph can light it.
 */
export const ChatPanel = (
  { agentId, nodeName, onNode }: {
    readonly agentId: number
    readonly nodeName: (id: string) => string
    readonly onNode: (id: string | undefined) => void
  }
) => {
  const [chat, setChat] = useState<ChatSession>()
  const [turns, setTurns] = useState<ReadonlyArray<Turn>>([])
  const [streaming, setStreaming] = useState<string>()
  const [text, setText] = useState("")
  const [busy, setBusy] = useState(false)
  const [problem, setProblem] = useState<string>()
  const log = useRef<HTMLOListElement>(null)

  useEffect(() => {
    log.current?.lastElementChild?.scrollIntoView({ block: "nearest" })
  }, [turns, streaming])

  const follow = (session: ChatSession) => {
    setChat(session)
    setTurns(session.transcript.map((turn) => ({
      role: turn.role,
      text: turn.text,
      nodeId: turn.node_id,
      ...(turn.latency_ms !== undefined ? { latencyMs: turn.latency_ms } : {})
    })))
    onNode(session.state === "running" || session.state === "initialized" ? session.node_id ?? undefined : undefined)
  }

  const start = async () => {
    setBusy(true)
    setProblem(undefined)
    try {
      follow(
        await ok(api.POST("/api/v1/workflow/{workflow_id}/text-chat/sessions", {
          params: { path: { workflow_id: agentId } },
          body: { use_draft: true }
        }))
      )
    } catch (error) {
      setProblem(messageOf(error))
    }
    setBusy(false)
  }

  const send = async (event: FormEvent) => {
    event.preventDefault()
    if (!chat || !text.trim()) return
    const message = text
    setText("")
    setBusy(true)
    setProblem(undefined)
    setTurns((previous) => [...previous, { role: "user", text: message }])
    setStreaming("")
    try {
      const { data, response, error } = await api.POST(
        "/api/v1/workflow/{workflow_id}/text-chat/sessions/{run_id}/messages",
        {
          params: { path: { workflow_id: agentId, run_id: chat.workflow_run_id } },
          body: { text: message },
          headers: { accept: "text/event-stream" },
          parseAs: "stream"
        }
      )
      if (!response.ok || !data) throw problemOf(response.status, error)
      for await (const frame of readEventStream(data)) {
        if (frame.event === "token") setStreaming((partial) => (partial ?? "") + (frame.data as { text: string }).text)
        if (frame.event === "message") follow(frame.data as ChatSession)
        if (frame.event === "error") throw problemOf((frame.data as { status: number }).status, frame.data)
      }
    } catch (error) {
      setProblem(messageOf(error))
    }
    setStreaming(undefined)
    setBusy(false)
  }

  const end = async () => {
    if (!chat) return
    await api.POST("/api/v1/workflow/{workflow_id}/text-chat/sessions/{run_id}/end", {
      params: { path: { workflow_id: agentId, run_id: chat.workflow_run_id } }
    }).catch(() => undefined)
    setChat(undefined)
    setTurns([])
    onNode(undefined)
  }

  const variables = Object.entries(chat?.gathered_context ?? {})
  const finished = chat && (chat.state === "completed" || chat.state === "failed")

  return (
    <section className="chat-panel" aria-labelledby="try-it">
      <div className="panel-head">
        <h2 id="try-it">Try it</h2>
        {chat && <button type="button" className="secondary" onClick={end}>{finished ? "Close" : "End"}</button>}
      </div>
      {!chat && (
        <div className="empty">
          <p>Chat with this agent as a caller would: the draft when there is one, else the published version.</p>
          <button type="button" onClick={start} disabled={busy}>Start a conversation</button>
        </div>
      )}
      {chat && (
        <>
          <ol className="chat-log" ref={log} aria-live="polite">
            {turns.map((turn, index) => (
              <li key={index} className={`turn ${turn.role}`}>
                <span className="visually-hidden">{turn.role === "user" ? "You" : "Agent"}:</span>
                {turn.text}
                {turn.role === "assistant" && (turn.nodeId || turn.latencyMs !== undefined) && (
                  <span className="turn-meta">
                    {turn.nodeId ? nodeName(turn.nodeId) : ""}
                    {turn.latencyMs !== undefined ? ` · ${Math.round(turn.latencyMs)} ms` : ""}
                  </span>
                )}
              </li>
            ))}
            {streaming !== undefined && <li className="turn assistant streaming">{streaming || "…"}</li>}
          </ol>
          {finished && (
            <p className="notice" role="status">
              The conversation {chat.state === "failed" ? "failed" : "ended"}
              {chat.end_reason ? `: ${chat.end_reason}` : ""}
              {chat.error ? ` (${chat.error})` : ""}.
            </p>
          )}
          {!finished && (
            <form onSubmit={send} className="chat-input">
              <label className="visually-hidden" htmlFor="chat-message">Message</label>
              <input
                id="chat-message"
                value={text}
                onChange={(e) => setText(e.target.value)}
                placeholder="Say something…"
                disabled={busy}
                autoComplete="off"
              />
              <button type="submit" disabled={busy || !text.trim()}>Send</button>
            </form>
          )}
          {variables.length > 0 && (
            <dl className="variables" aria-label="Extracted variables">
              {variables.map(([name, value]) => (
                <div key={name}>
                  <dt>{name}</dt>
                  <dd>{JSON.stringify(value)}</dd>
                </div>
              ))}
            </dl>
          )}
        </>
      )}
      {problem && <p className="problem" role="alert">{problem}</p>}
    </section>
  )
}
