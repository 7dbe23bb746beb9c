import { useEffect, useRef, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { messageOf, ok } from "../api/problems.ts"
import { Link } from "../router.tsx"
import { type BrowserCall, type CallProgress, connectBrowserCall } from "./browserCall.ts"
import { ToolCallLine } from "./ToolCallLine.tsx"

type Line =
  | {
    readonly kind: "turn"
    readonly role: "user" | "assistant"
    readonly text: string
    readonly nodeId: string
    readonly interrupted: boolean
    readonly latencyMs?: number
  }
  | { readonly kind: "tool"; readonly call: Schemas["ToolCallTaken"] }

type CallState = "idle" | "connecting" | "live" | "ended"

/**
 * "Try it" by voice: a browser test call to the agent's draft, with the conversation as the server
 * records it (the caller's words, the agent's, cut short when spoken over, and how long each answer
 * took to start), the node the call is on reported so the graph can light it.
 */
export const CallPanel = (
  { agentId, nodeName, onNode, onClose }: {
    readonly agentId: number
    readonly nodeName: (id: string) => string
    readonly onNode: (id: string | undefined) => void
    readonly onClose: () => void
  }
) => {
  const [state, setState] = useState<CallState>("idle")
  const [runId, setRunId] = useState<number>()
  const [lines, setLines] = useState<ReadonlyArray<Line>>([])
  const [speaking, setSpeaking] = useState(false)
  const [bargeIns, setBargeIns] = useState(0)
  const [endedBy, setEndedBy] = useState<"caller" | "server" | "unconnected">()
  const [problem, setProblem] = useState<string>()
  const call = useRef<BrowserCall>(undefined)
  const log = useRef<HTMLOListElement>(null)

  useEffect(() => {
    log.current?.lastElementChild?.scrollIntoView({ block: "nearest" })
  }, [lines])
  // Leaving the editor hangs up.
  useEffect(() => () => call.current?.hangUp(), [])

  const onProgress = (progress: CallProgress) => {
    if (progress.event === "node") onNode(progress.node_id)
    else if (progress.event === "tool_call") {
      const { event: _event, ...taken } = progress
      setLines((previous) => [...previous, { kind: "tool", call: taken }])
    } else {
      setLines((previous) => [...previous, {
        kind: "turn",
        role: progress.role,
        text: progress.text,
        nodeId: progress.node_id,
        interrupted: progress.interrupted,
        ...(progress.latency_ms !== undefined ? { latencyMs: progress.latency_ms } : {})
      }])
    }
  }

  const start = async () => {
    setProblem(undefined)
    setLines([])
    setBargeIns(0)
    setEndedBy(undefined)
    setState("connecting")
    try {
      const started = await ok(api.POST("/api/v1/workflow/{workflow_id}/browser-calls", {
        params: { path: { workflow_id: agentId } },
        body: { use_draft: true }
      }))
      setRunId(started.workflow_run_id)
      call.current = await connectBrowserCall(started.media_url, {
        onProgress,
        onCleared: () => setBargeIns((count) => count + 1),
        onSpeaking: setSpeaking,
        onEnded: (by) => {
          call.current = undefined
          setEndedBy(by)
          setState("ended")
          onNode(undefined)
        }
      })
      setState("live")
    } catch (error) {
      setProblem(messageOf(error))
      setState("idle")
      onNode(undefined)
    }
  }

  const latencies = lines.flatMap((line) =>
    line.kind === "turn" && line.latencyMs !== undefined ? [line.latencyMs] : []
  )
  const status = state === "connecting"
    ? "Connecting…"
    : state === "live"
    ? speaking ? "Agent speaking" : "Listening"
    : state === "ended"
    ? endedBy === "caller"
      ? "You hung up."
      : endedBy === "unconnected"
      ? "The call could not connect: the link expired or the call was already taken. Call again."
      : "The call ended."
    : undefined

  return (
    <section className="chat-panel call-panel" aria-labelledby="call-heading">
      <div className="panel-head">
        <h2 id="call-heading">Call</h2>
        {state === "live" || state === "connecting"
          ? (
            <button type="button" className="danger" onClick={() => call.current?.hangUp()} disabled={!call.current}>
              Hang up
            </button>
          )
          : <button type="button" className="secondary" onClick={onClose}>Back to chat</button>}
      </div>
      {state === "idle" && (
        <div className="empty">
          <p>
            Talk to the draft of this agent from this browser, as a caller would. Use headphones: the browser does not
            cancel the agent's voice from your microphone, and the agent would hear itself.
          </p>
          <button type="button" onClick={start}>Start the call</button>
        </div>
      )}
      {status && (
        <p className={`call-status ${state}`} role="status">
          <span className="call-dot" aria-hidden="true" />
          {status}
        </p>
      )}
      {state === "live" && (
        <div className="call-keypad" role="group" aria-label="Keypad">
          {["1", "2", "3", "4", "5", "6", "7", "8", "9", "*", "0", "#"].map((key) => (
            <button
              key={key}
              type="button"
              className="secondary"
              aria-label={`Key ${key}`}
              onClick={() => call.current?.pressKey(key)}
            >
              {key}
            </button>
          ))}
        </div>
      )}
      {latencies.length > 0 && (
        <p className="call-figures">
          Last answer after {Math.round(latencies.at(-1)!)} ms
          {bargeIns > 0 ? ` · ${bargeIns} barge-in${bargeIns === 1 ? "" : "s"}` : ""}
        </p>
      )}
      {state !== "idle" && (
        <ol className="chat-log" ref={log} aria-live="polite" aria-label="Live transcript">
          {lines.length === 0 && state !== "ended" && <li className="hint">The agent will speak first.</li>}
          {lines.map((line, index) =>
            line.kind === "tool"
              ? <ToolCallLine key={index} call={line.call} nodeName={nodeName} />
              : (
                <li key={index} className={`turn ${line.role}${line.interrupted ? " interrupted" : ""}`}>
                  <span className="visually-hidden">{line.role === "user" ? "You" : "Agent"}:</span>
                  <span className="turn-text">{line.interrupted ? `${line.text}…` : line.text}</span>
                  {line.role === "assistant" && (
                    <span className="turn-meta">
                      {nodeName(line.nodeId)}
                      {line.latencyMs !== undefined ? ` · answered in ${Math.round(line.latencyMs)} ms` : ""}
                      {line.interrupted ? " · interrupted: you spoke over the rest" : ""}
                    </span>
                  )}
                </li>
              )
          )}
        </ol>
      )}
      {state === "ended" && runId !== undefined && (
        <p>
          <Link href={`/runs/${runId}`}>Open this call in Conversations</Link>{" "}
          for its recording and extracted variables, or{" "}
          <button type="button" className="link" onClick={start}>call again</button>.
        </p>
      )}
      {problem && <p className="problem" role="alert">{problem}</p>}
    </section>
  )
}
