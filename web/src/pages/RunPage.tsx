import { api } from "../api/client.ts"
import { ok } from "../api/problems.ts"
import { Link } from "../router.tsx"
import { useLoad } from "../useLoad.ts"
import { formatSeconds } from "./usageFilters.ts"

interface TranscriptTurn {
  readonly role?: string
  readonly text?: string
  readonly node_id?: string
  readonly start_ms?: number
  readonly end_ms?: number
  readonly latency_ms?: number
  readonly interrupted?: boolean
}

const turnsOf = (json: unknown): ReadonlyArray<TranscriptTurn> => {
  if (Array.isArray(json)) return json as Array<TranscriptTurn>
  if (typeof json === "object" && json !== null && "transcript" in json) return turnsOf(json.transcript)
  return []
}

/** One conversation: who, when, how long, the transcript with its timing, the recording, what was extracted. */
export const RunPage = ({ runId }: { readonly runId: number }) => {
  const [loaded] = useLoad(async () => {
    const report = await ok(api.GET("/api/v1/organizations/usage/runs", {
      params: {
        query: { filters: JSON.stringify([{ attribute: "runId", type: "number", value: { value: runId } }]), limit: 1 }
      }
    }))
    const run = report.runs[0]
    if (!run) throw new Error(`There is no conversation #${runId} in your organization.`)
    const transcript = run.transcript_url
      ? turnsOf(await fetch(run.transcript_url).then((response) => (response.ok ? response.json() : [])))
      : []
    return { run, transcript }
  }, [runId])

  if (loaded.state === "loading") return <p role="status">Loading the conversation…</p>
  if (loaded.state === "failed") return <p className="problem" role="alert">{loaded.message}</p>
  const { run, transcript } = loaded.value
  const extracted = Object.entries(run.gathered_context)
  return (
    <section>
      <p>
        <Link href="/runs">← Conversations</Link>
      </p>
      <h1>Conversation #{run.id}</h1>
      <dl className="facts">
        <div>
          <dt>Agent</dt>
          <dd>
            <Link href={`/agents/${run.workflow_id}`}>{run.workflow_name ?? `Agent ${run.workflow_id}`}</Link>
          </dd>
        </div>
        <div>
          <dt>When</dt>
          <dd>{new Date(run.created_at).toLocaleString()}</dd>
        </div>
        <div>
          <dt>Channel</dt>
          <dd>{run.channel} · {run.direction}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{formatSeconds(run.call_duration_seconds)}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>{run.service_tokens}</dd>
        </div>
        <div>
          <dt>Disposition</dt>
          <dd>{run.disposition ?? "—"}</dd>
        </div>
      </dl>
      {run.recording_url && (
        <section aria-labelledby="recording">
          <h2 id="recording">Recording</h2>
          <audio controls preload="metadata" src={run.recording_url}>
            <a href={run.recording_url}>Download the recording</a>
          </audio>
        </section>
      )}
      <section aria-labelledby="transcript">
        <h2 id="transcript">Transcript</h2>
        {transcript.length === 0 ?
          <p className="hint">No transcript was stored for this conversation.</p> :
          (
            <ol className="chat-log readonly">
              {transcript.map((turn, index) => (
                <li key={index} className={`turn ${turn.role === "user" ? "user" : "assistant"}`}>
                  <span className="visually-hidden">{turn.role === "user" ? "Caller" : "Agent"}:</span>
                  {turn.text}
                  <span className="turn-meta">
                    {turn.start_ms !== undefined ? `${(turn.start_ms / 1000).toFixed(1)}s` : ""}
                    {turn.latency_ms !== undefined ? ` · ${Math.round(turn.latency_ms)} ms to answer` : ""}
                    {turn.interrupted ? " · interrupted" : ""}
                  </span>
                </li>
              ))}
            </ol>
          )}
      </section>
      <section aria-labelledby="extracted">
        <h2 id="extracted">Extracted variables</h2>
        {extracted.length === 0 ? <p className="hint">Nothing was extracted.</p> : (
          <dl className="variables">
            {extracted.map(([name, value]) => (
              <div key={name}>
                <dt>{name}</dt>
                <dd>{JSON.stringify(value)}</dd>
              </div>
            ))}
          </dl>
        )}
      </section>
    </section>
  )
}
