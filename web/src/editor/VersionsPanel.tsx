import { api, type Schemas } from "../api/client.ts"
import { ok } from "../api/problems.ts"
import { useLoad } from "../useLoad.ts"

type Version = Schemas["WorkflowVersionResponse"]

/** Every version of the agent, newest first; any of them can be loaded into the editor as the new draft. */
export const VersionsPanel = (
  { agentId, onOpen }: { readonly agentId: number; readonly onOpen: (version: Version) => void }
) => {
  const [versions] = useLoad(
    () => ok(api.GET("/api/v1/workflow/{workflow_id}/versions", { params: { path: { workflow_id: agentId } } })),
    [agentId]
  )
  return (
    <section className="side-panel" aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      {versions.state === "loading" && <p role="status">Loading…</p>}
      {versions.state === "failed" && <p className="problem" role="alert">{versions.message}</p>}
      {versions.state === "ready" && (
        <ol className="versions">
          {versions.value.map((version) => (
            <li key={version.id}>
              <span>
                v{version.version_number}{" "}
                <span className={`badge ${version.version_status}`}>{version.version_status}</span>
                <br />
                <small>
                  {version.published_at
                    ? `published ${new Date(version.published_at).toLocaleString()}`
                    : `created ${new Date(version.created_at).toLocaleString()}`}
                </small>
              </span>
              <button type="button" className="secondary" onClick={() => onOpen(version)}>
                Load <span className="visually-hidden">version {version.version_number}</span>
              </button>
            </li>
          ))}
        </ol>
      )}
    </section>
  )
}
