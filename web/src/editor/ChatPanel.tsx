import { type FormEvent, useEffect, useRef, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { messageOf, ok, problemOf } from "../api/problems.ts"
import { readEventStream } from "./eventStream.ts"
import { ToolCallLine } from "./ToolCallLine.tsx"

type ChatSession = Schemas["TextChatSessionResponse"]
type ChatReply = Schemas["TextChatReplyResponse"]

interface Turn {
  readonly role: "user" | "assistant"
  readonly text: string
  readonly nodeId?: string
  readonly latencyMs?: number
}

/**
 * "Try it": a text conversation with the agent's draft (else its published version), the reply
 * streamed token by token, the tools the agent called and the variables extracted so far shown as
 * it goes; the node the conversation is on is reported so the graph can light it.
 */
export const ChatPanel = (
  { agentId, nodeName, onNode, onCall }: {
    readonly agentId: number
    readonly nodeName: (id: string) => string
    readonly onNode: (id: string | undefined) => void
    /** Switches "Try it" to a voice call. */
    readonly onCall: () => void
  }
) => {
  const [chat, setChat] = useState<ChatSession>()
  const [turns, setTurns] = useState<ReadonlyArray<Turn>>([])
  /** The tools called in each exchange, by the transcript position of the message that led to them. */
  const [toolCalls, setToolCalls] = useState<ReadonlyMap<number, ChatReply["tool_calls"]>>(new Map())
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
        if (frame.event === "message") {
          const reply = frame.data as ChatReply
          const asked = reply.transcript.map((turn) => turn.role).lastIndexOf("user")
          if (reply.tool_calls.length > 0) setToolCalls((previous) => new Map(previous).set(asked, reply.tool_calls))
          // The reply takes the streamed text's place in the same render: never both on screen at once.
          setStreaming(undefined)
          follow(reply)
        }
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
    setToolCalls(new Map())
    onNode(undefined)
  }

  const finished = chat && (chat.state === "completed" || chat.state === "failed")
  // Settled in gathered_context once the conversation ends (with the disposition); until then, as extracted.
  const variables = Object.entries((finished ? chat.gathered_context : chat?.extracted_variables) ?? {})

  return (
    <section className="chat-panel" aria-labelledby="try-it">
      <div className="panel-head">
        <h2 id="try-it">Try it</h2>
        {chat && <button type="button" className="secondary" onClick={end}>{finished ? "Close" : "End"}</button>}
      </div>
      {!chat && (
        <div className="empty">
          <p>
            Chat with this agent as a caller would, or call it from this browser: the draft when there is one, else the
            published version.
          </p>
          <div className="actions">
            <button type="button" onClick={start} disabled={busy}>Start a conversation</button>
            <button type="button" className="secondary" onClick={onCall} disabled={busy}>Call</button>
          </div>
        </div>
      )}
      {chat && (
        <>
          <ol className="chat-log" ref={log} aria-live="polite">
            {turns.map((turn, index) => [
              <li key={index} className={`turn ${turn.role}`}>
                <span className="visually-hidden">{turn.role === "user" ? "You" : "Agent"}:</span>
                {turn.text}
                {turn.role === "assistant" && (turn.nodeId || turn.latencyMs !== undefined) && (
                  <span className="turn-meta">
                    {turn.nodeId ? nodeName(turn.nodeId) : ""}
                    {turn.latencyMs !== undefined ? ` · ${Math.round(turn.latencyMs)} ms` : ""}
                  </span>
                )}
              </li>,
              ...(toolCalls.get(index) ?? []).map((call, position) => (
                <ToolCallLine key={`${index}-tool-${position}`} call={call} nodeName={nodeName} />
              ))
            ])}
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
          <h3 className="subhead" id="chat-variables">Extracted variables</h3>
          {variables.length > 0
            ? (
              <dl className="variables" aria-labelledby="chat-variables">
                {variables.map(([name, value]) => (
                  <div key={name}>
                    <dt>{name}</dt>
                    <dd>{JSON.stringify(value)}</dd>
                  </div>
                ))}
              </dl>
            )
            : <p className="hint">None yet: a step's variables are extracted when the conversation leaves it.</p>}
        </>
      )}
      {problem && <p className="problem" role="alert">{problem}</p>}
    </section>
  )
}
