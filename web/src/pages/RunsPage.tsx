import { type FormEvent, useState } from "react"
import { download } from "../agentFile.ts"
import { api } from "../api/client.ts"
import { messageOf, ok, problemOf } from "../api/problems.ts"
import { Link } from "../router.tsx"
import { useLoad } from "../useLoad.ts"
import { emptyFilters, filtersParameter, formatSeconds, type UsageFilterForm } from "./usageFilters.ts"

interface Query {
  readonly start: string
  readonly end: string
  readonly filters: UsageFilterForm
  readonly sortBy: "created_at" | "duration"
  readonly sortOrder: "asc" | "desc"
  readonly page: number
}

const LIMIT = 25

const queryParameters = (query: Query) => ({
  ...(query.start ? { start_date: query.start } : {}),
  ...(query.end ? { end_date: query.end } : {}),
  ...(filtersParameter(query.filters) ? { filters: filtersParameter(query.filters)! } : {}),
  sort_by: query.sortBy,
  sort_order: query.sortOrder
})

/** Every conversation (call or chat) with its usage: filters, sorting, totals over the filtered set, pages. */
export const RunsPage = () => {
  const [draft, setDraft] = useState<Query>({
    start: "",
    end: "",
    filters: emptyFilters,
    sortBy: "created_at",
    sortOrder: "desc",
    page: 1
  })
  const [query, setQuery] = useState(draft)
  const [problem, setProblem] = useState<string>()
  const [agents] = useLoad(
    () => ok(api.GET("/api/v1/workflow/fetch", { params: { query: { status: "active,archived" } } })),
    []
  )
  const [runs] = useLoad(
    () =>
      ok(api.GET("/api/v1/organizations/usage/runs", {
        params: { query: { ...queryParameters(query), page: query.page, limit: LIMIT } }
      })),
    [query]
  )
  const setFilter = (patch: Partial<UsageFilterForm>) =>
    setDraft((current) => ({ ...current, filters: { ...current.filters, ...patch } }))

  const apply = (event: FormEvent) => {
    event.preventDefault()
    setQuery({ ...draft, page: 1 })
  }

  const exportCsv = async () => {
    setProblem(undefined)
    try {
      const { data, response, error } = await api.GET("/api/v1/organizations/usage/runs/report", {
        params: { query: queryParameters(query) },
        parseAs: "text"
      })
      if (!response.ok || data === undefined) throw problemOf(response.status, error)
      download("conversations.csv", data, "text/csv")
    } catch (error) {
      setProblem(messageOf(error))
    }
  }

  return (
    <section>
      <div className="page-head">
        <h1>Conversations</h1>
        <button type="button" className="secondary" onClick={exportCsv}>Export CSV</button>
      </div>
      <form className="filters wrap" onSubmit={apply} aria-label="Filters">
        <label>
          From
          <input type="date" value={draft.start} onChange={(e) => setDraft({ ...draft, start: e.target.value })} />
        </label>
        <label>
          To
          <input type="date" value={draft.end} onChange={(e) => setDraft({ ...draft, end: e.target.value })} />
        </label>
        <label>
          Agent
          <select value={draft.filters.agentId} onChange={(e) => setFilter({ agentId: e.target.value })}>
            <option value="">All agents</option>
            {agents.state === "ready" &&
              agents.value.map((agent) => <option key={agent.id} value={agent.id}>{agent.name}</option>)}
          </select>
        </label>
        <label>
          Campaign id
          <input
            inputMode="numeric"
            value={draft.filters.campaignId}
            onChange={(e) => setFilter({ campaignId: e.target.value })}
          />
        </label>
        <label>
          Caller number
          <input value={draft.filters.callerNumber} onChange={(e) => setFilter({ callerNumber: e.target.value })} />
        </label>
        <label>
          Called number
          <input value={draft.filters.calledNumber} onChange={(e) => setFilter({ calledNumber: e.target.value })} />
        </label>
        <label>
          Dispositions
          <input
            value={draft.filters.dispositions}
            placeholder="QUALIFIED, CALLBACK"
            onChange={(e) => setFilter({ dispositions: e.target.value })}
          />
        </label>
        <label>
          Min. seconds
          <input
            type="number"
            min={0}
            value={draft.filters.minSeconds}
            onChange={(e) => setFilter({ minSeconds: e.target.value })}
          />
        </label>
        <label>
          Max. seconds
          <input
            type="number"
            min={0}
            value={draft.filters.maxSeconds}
            onChange={(e) => setFilter({ maxSeconds: e.target.value })}
          />
        </label>
        <label>
          Direction
          <select
            value={draft.filters.direction}
            onChange={(e) => setFilter({ direction: e.target.value as UsageFilterForm["direction"] })}
          >
            <option value="">Both</option>
            <option value="inbound">Inbound</option>
            <option value="outbound">Outbound</option>
          </select>
        </label>
        <label>
          Channel
          <select
            value={draft.filters.channel}
            onChange={(e) => setFilter({ channel: e.target.value as UsageFilterForm["channel"] })}
          >
            <option value="">All</option>
            <option value="telephony">Phone</option>
            <option value="web">Browser call</option>
            <option value="chat">Chat</option>
          </select>
        </label>
        <label>
          Sort by
          <select
            value={`${draft.sortBy} ${draft.sortOrder}`}
            onChange={(e) => {
              const [sortBy, sortOrder] = e.target.value.split(" ") as [Query["sortBy"], Query["sortOrder"]]
              setDraft({ ...draft, sortBy, sortOrder })
            }}
          >
            <option value="created_at desc">Newest first</option>
            <option value="created_at asc">Oldest first</option>
            <option value="duration desc">Longest first</option>
            <option value="duration asc">Shortest first</option>
          </select>
        </label>
        <button type="submit">Apply</button>
      </form>
      {problem && <p className="problem" role="alert">{problem}</p>}
      {runs.state === "loading" && <p role="status">Loading conversations…</p>}
      {runs.state === "failed" && <p className="problem" role="alert">{runs.message}</p>}
      {runs.state === "ready" && (
        <>
          <p className="totals" role="status">
            {runs.value.total_count} conversation{runs.value.total_count === 1 ? "" : "s"} ·{" "}
            {formatSeconds(runs.value.total_duration_seconds)} · {runs.value.total_service_tokens} tokens
          </p>
          {runs.value.runs.length === 0
            ? (
              <div className="empty">
                <p>No conversations match. Try an agent from the editor's “Try it” panel, or widen the filters.</p>
              </div>
            )
            : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Run</th>
                    <th scope="col">Agent</th>
                    <th scope="col">When</th>
                    <th scope="col">Channel</th>
                    <th scope="col">Numbers</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Tokens</th>
                    <th scope="col">Disposition</th>
                  </tr>
                </thead>
                <tbody>
                  {runs.value.runs.map((run) => (
                    <tr key={run.id}>
                      <td>
                        <Link href={`/runs/${run.id}`}>#{run.id}</Link>
                      </td>
                      <td>{run.workflow_name ?? `Agent ${run.workflow_id}`}</td>
                      <td>{new Date(run.created_at).toLocaleString()}</td>
                      <td>{run.channel} · {run.direction}</td>
                      <td>{[run.caller_number, run.called_number].filter(Boolean).join(" → ") || "—"}</td>
                      <td>{formatSeconds(run.call_duration_seconds)}</td>
                      <td>{run.service_tokens}</td>
                      <td>{run.disposition ?? "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          {runs.value.total_pages > 1 && (
            <nav className="pagination" aria-label="Pages">
              <button
                type="button"
                className="secondary"
                disabled={query.page <= 1}
                onClick={() => setQuery({ ...query, page: query.page - 1 })}
              >
                Previous
              </button>
              <span>Page {runs.value.page} of {runs.value.total_pages}</span>
              <button
                type="button"
                className="secondary"
                disabled={query.page >= runs.value.total_pages}
                onClick={() => setQuery({ ...query, page: query.page + 1 })}
              >
                Next
              </button>
            </nav>
          )}
        </>
      )}
    </section>
  )
}
