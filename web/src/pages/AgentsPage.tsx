import { type ChangeEvent, useEffect, useMemo, useState } from "react"
import { importedAgent } from "../agentFile.ts"
import { api } from "../api/client.ts"
import { messageOf, ok } from "../api/problems.ts"
import { Link, navigate } from "../router.tsx"
import { useLoad } from "../useLoad.ts"

type StatusFilter = "active" | "archived" | "active,archived"

/** The organization's agents: search, filter by status, archive and unarchive, create or import. */
export const AgentsPage = ({ onShown }: { readonly onShown?: () => void }) => {
  // Most visits go on to an agent: the editor's code is fetched while the list is read.
  useEffect(() => {
    onShown?.()
  }, [onShown])
  const [status, setStatus] = useState<StatusFilter>("active")
  const [search, setSearch] = useState("")
  const [problem, setProblem] = useState<string>()
  const [agents, reload] = useLoad(
    () => ok(api.GET("/api/v1/workflow/fetch", { params: { query: { status } } })),
    [status]
  )
  const shown = useMemo(
    () =>
      agents.state === "ready"
        ? agents.value.filter((agent) => agent.name.toLowerCase().includes(search.trim().toLowerCase()))
        : [],
    [agents, search]
  )

  const setAgentStatus = async (id: number, next: "active" | "archived") => {
    setProblem(undefined)
    try {
      await ok(api.PUT("/api/v1/workflow/{workflow_id}/status", {
        params: { path: { workflow_id: id } },
        body: { status: next }
      }))
      reload()
    } catch (error) {
      setProblem(messageOf(error))
    }
  }

  const importFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0]
    event.target.value = ""
    if (!file) return
    setProblem(undefined)
    try {
      const body = importedAgent(await file.text(), file.name)
      const created = await ok(api.POST("/api/v1/workflow/create/definition", { body }))
      navigate(`/agents/${created.id}`)
    } catch (error) {
      setProblem(`Import failed: ${messageOf(error)}`)
    }
  }

  return (
    <section>
      <div className="page-head">
        <h1>Agents</h1>
        <div className="actions">
          <label className="button secondary">
            Import JSON
            <input type="file" accept="application/json,.json" className="visually-hidden" onChange={importFile} />
          </label>
          <Link href="/agents/new" className="button">New agent</Link>
        </div>
      </div>
      <div className="filters">
        <label>
          Search
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Agent name" />
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.target.value as StatusFilter)}>
            <option value="active">Active</option>
            <option value="archived">Archived</option>
            <option value="active,archived">All</option>
          </select>
        </label>
      </div>
      {problem && <p className="problem" role="alert">{problem}</p>}
      {agents.state === "loading" && <p role="status">Loading agents…</p>}
      {agents.state === "failed" && <p className="problem" role="alert">{agents.message}</p>}
      {agents.state === "ready" && shown.length === 0 && (
        <div className="empty">
          {agents.value.length === 0
            ? (
              <p>
                No {status === "archived" ? "archived " : ""}agents yet.{" "}
                {status !== "archived" && <Link href="/agents/new">Create your first agent</Link>}
              </p>
            )
            : <p>No agent name contains “{search}”.</p>}
        </div>
      )}
      {shown.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Version</th>
              <th scope="col">Conversations</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((agent) => (
              <tr key={agent.id}>
                <td>
                  <Link href={`/agents/${agent.id}`}>{agent.name}</Link>
                </td>
                <td>
                  <span className={`badge ${agent.status}`}>{agent.status}</span>
                </td>
                <td>{agent.version_number ? `v${agent.version_number} ${agent.version_status ?? ""}` : "—"}</td>
                <td>{agent.total_runs ?? 0}</td>
                <td>{new Date(agent.created_at).toLocaleDateString()}</td>
                <td>
                  {agent.status === "archived"
                    ? (
                      <button type="button" className="secondary" onClick={() => setAgentStatus(agent.id, "active")}>
                        Unarchive <span className="visually-hidden">{agent.name}</span>
                      </button>
                    )
                    : (
                      <button type="button" className="secondary" onClick={() => setAgentStatus(agent.id, "archived")}>
                        Archive <span className="visually-hidden">{agent.name}</span>
                      </button>
                    )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
