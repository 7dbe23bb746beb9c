import { useEffect, useRef, useState } from "react"
import { download } from "../agentFile.ts"
import { api } from "../api/client.ts"
import { messageOf, ok, problemOf } from "../api/problems.ts"
import { Link, navigate } from "../router.tsx"
import { useLoad } from "../useLoad.ts"
import { allowed, formatDate } from "./campaignStates.ts"
import { ProgressFacts } from "./ProgressFacts.tsx"
import { useCampaignProgress } from "./useCampaignProgress.ts"

type Command = "start" | "pause" | "resume" | "cancel"

const commandPaths = {
  start: "/api/v1/campaign/{campaign_id}/start",
  pause: "/api/v1/campaign/{campaign_id}/pause",
  resume: "/api/v1/campaign/{campaign_id}/resume",
  cancel: "/api/v1/campaign/{campaign_id}/cancel"
} as const

const RUNS_LIMIT = 25
const REFRESH_MS = 500

/** One campaign: live progress pushed by the server, its commands, the calls it placed, its log and report. */
export const CampaignPage = ({ campaignId }: { readonly campaignId: number }) => {
  const [campaign, reloadCampaign] = useLoad(
    () => ok(api.GET("/api/v1/campaign/{campaign_id}", { params: { path: { campaign_id: campaignId } } })),
    [campaignId]
  )
  const [runsPage, setRunsPage] = useState(1)
  const [runs, reloadRuns] = useLoad(
    () =>
      ok(api.GET("/api/v1/campaign/{campaign_id}/runs", {
        params: { path: { campaign_id: campaignId }, query: { page: runsPage, limit: RUNS_LIMIT } }
      })),
    [campaignId, runsPage]
  )
  const live = useCampaignProgress(campaignId)
  const [problem, setProblem] = useState<string>()
  const [busy, setBusy] = useState(false)

  // Calls that ended and state changes show in the outcomes and the log as they are pushed; a busy
  // campaign changes many times a second, so they are read again at most twice a second.
  const seen = useRef<string>(undefined)
  const refresh = useRef<ReturnType<typeof setTimeout>>(undefined)
  useEffect(() => {
    if (!live.progress) return
    const key = `${live.progress.state}/${live.progress.processed_rows}/${live.progress.executed_count}`
    if (seen.current !== undefined && seen.current !== key && refresh.current === undefined) {
      refresh.current = setTimeout(() => {
        refresh.current = undefined
        reloadCampaign()
        reloadRuns()
      }, REFRESH_MS)
    }
    seen.current = key
  }, [live.progress, reloadCampaign, reloadRuns])
  useEffect(() => () => clearTimeout(refresh.current), [])

  const run = async (command: Command) => {
    setProblem(undefined)
    setBusy(true)
    try {
      await ok(api.POST(commandPaths[command], { params: { path: { campaign_id: campaignId } } }))
      reloadCampaign()
    } catch (error) {
      setProblem(messageOf(error))
    }
    setBusy(false)
  }

  const redial = async () => {
    setProblem(undefined)
    setBusy(true)
    try {
      const child = await ok(api.POST("/api/v1/campaign/{campaign_id}/redial", {
        params: { path: { campaign_id: campaignId } },
        body: {}
      }))
      navigate(`/campaigns/${child.id}`)
    } catch (error) {
      setProblem(messageOf(error))
    }
    setBusy(false)
  }

  const report = async () => {
    setProblem(undefined)
    try {
      const { data, response, error } = await api.GET("/api/v1/campaign/{campaign_id}/report", {
        params: { path: { campaign_id: campaignId } },
        parseAs: "text"
      })
      if (!response.ok || data === undefined) throw problemOf(response.status, error)
      const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1]
      download(name ?? `campaign-${campaignId}.csv`, data, "text/csv")
    } catch (error) {
      setProblem(messageOf(error))
    }
  }

  if (campaign.state === "loading") return <p role="status">Loading the campaign…</p>
  if (campaign.state === "failed") {
    return (
      <section>
        <p role="alert" className="problem">{campaign.message}</p>
        <Link href="/campaigns">Back to campaigns</Link>
      </section>
    )
  }
  const detail = campaign.value
  const progress = live.progress
  const state = progress?.state ?? detail.state
  return (
    <section className="campaign">
      <div className="page-head">
        <h1>{detail.name}</h1>
        <span className={`badge ${state}`} aria-label={`State: ${state}`}>{state}</span>
      </div>
      <p className="hint">
        Agent <Link href={`/agents/${detail.workflow_id}`}>{detail.workflow_name}</Link>
        {" · "}calling through {detail.telephony_configuration_name ?? "the organization's default configuration"}
        {" · "}created {formatDate(detail.created_at)}
        {detail.parent_campaign_id !== null && (
          <>
            {" · "}redial of{" "}
            <Link href={`/campaigns/${detail.parent_campaign_id}`}>campaign #{detail.parent_campaign_id}</Link>
          </>
        )}
      </p>
      <div className="actions" role="group" aria-label="Campaign commands">
        {allowed.start(state) && <button type="button" disabled={busy} onClick={() => run("start")}>Start</button>}
        {allowed.pause(state) && (
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() => run("pause")}
          >
            Pause
          </button>
        )}
        {allowed.resume(state) && <button type="button" disabled={busy} onClick={() => run("resume")}>Resume</button>}
        {allowed.cancel(state) && (
          <button
            type="button"
            className="danger"
            disabled={busy}
            onClick={() => run("cancel")}
          >
            Cancel
          </button>
        )}
        {allowed.redial(state) && detail.redialed_campaign_id === null && (
          <button type="button" className="secondary" disabled={busy} onClick={redial}>
            Redial unreached contacts
          </button>
        )}
        {detail.redialed_campaign_id !== null && (
          <Link href={`/campaigns/${detail.redialed_campaign_id}`}>Redial campaign #{detail.redialed_campaign_id}</Link>
        )}
        <button type="button" className="secondary" onClick={report}>Download report (CSV)</button>
      </div>
      {problem && <p role="alert" className="problem">{problem}</p>}
      {detail.warnings.length > 0 && (
        <div className="notice">
          <p>The import skipped some rows:</p>
          <ul>{detail.warnings.map((warning, index) => <li key={index}>{warning}</li>)}</ul>
        </div>
      )}

      <ProgressFacts progress={progress} problem={live.problem} />

      <section aria-labelledby="outcomes">
        <h2 id="outcomes">Calls</h2>
        {runs.state === "loading" && <p role="status">Loading calls…</p>}
        {runs.state === "failed" && <p role="alert" className="problem">{runs.message}</p>}
        {runs.state === "ready" && runs.value.total_count === 0 && (
          <p className="hint">No calls yet{state === "created" ? ": start the campaign to place them." : "."}</p>
        )}
        {runs.state === "ready" && runs.value.total_count > 0 && (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Conversation</th>
                  <th scope="col">Called</th>
                  <th scope="col">State</th>
                  <th scope="col">Disposition</th>
                  <th scope="col">Ended because</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Started</th>
                </tr>
              </thead>
              <tbody>
                {runs.value.runs.map((call) => (
                  <tr key={call.id}>
                    <td>
                      <Link href={`/runs/${call.id}`}>#{call.id}</Link>
                    </td>
                    <td>{call.called_number ?? "—"}</td>
                    <td>{call.state}</td>
                    <td>{call.disposition ?? "—"}</td>
                    <td>{call.end_reason ?? "—"}</td>
                    <td>{call.duration_seconds} s</td>
                    <td>{formatDate(call.started_at ?? call.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {runs.value.total_pages > 1 && (
              <nav className="pagination" aria-label="Pages of calls">
                <button
                  type="button"
                  className="secondary"
                  disabled={runsPage <= 1}
                  onClick={() => setRunsPage(runsPage - 1)}
                >
                  Previous
                </button>
                <span>Page {runsPage} of {runs.value.total_pages}</span>
                <button
                  type="button"
                  className="secondary"
                  disabled={runsPage >= runs.value.total_pages}
                  onClick={() => setRunsPage(runsPage + 1)}
                >
                  Next
                </button>
              </nav>
            )}
          </>
        )}
      </section>

      <section aria-labelledby="log">
        <h2 id="log">Log</h2>
        {detail.logs.length === 0 ? <p className="hint">Nothing logged yet.</p> : (
          <ol className="campaign-log">
            {detail.logs.map((entry, index) => (
              <li key={index} className={entry.level}>
                <time dateTime={entry.ts}>{formatDate(entry.ts)}</time> {entry.message}
              </li>
            ))}
          </ol>
        )}
      </section>
    </section>
  )
}
