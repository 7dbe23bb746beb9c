import { formatDate } from "./campaignStates.ts"
import type { CampaignProgress } from "./useCampaignProgress.ts"

/** The counts, pacing, breaker and calling window, as last pushed by the server. */
export const ProgressFacts = (
  { progress, problem }: { readonly progress: CampaignProgress | undefined; readonly problem: string | undefined }
) => {
  const dispatch = progress?.dispatch
  return (
    <section aria-labelledby="progress">
      <h2 id="progress">Progress</h2>
      {problem && <p role="alert" className="problem">{problem}</p>}
      {!progress && !problem && <p role="status">Connecting to live progress…</p>}
      {progress && (
        <>
          {progress.import.status !== "ready" && (
            <p className={progress.import.status === "failed" ? "problem" : "notice"}>
              {progress.import.status === "loading" ?
                `Loading contacts: ${progress.import.contacts_loaded} so far (${
                  Math.round(progress.import.progress * 100)
                }%).` :
                `The contacts could not be loaded: ${progress.import.errors.join("; ")}`}
            </p>
          )}
          <dl className="facts" aria-live="polite" data-testid="campaign-counts">
            <div>
              <dt>Queued</dt>
              <dd data-count="queued">{progress.pending}</dd>
            </div>
            <div>
              <dt>Live calls</dt>
              <dd data-count="live">{progress.live_calls}</dd>
            </div>
            <div>
              <dt>Completed</dt>
              <dd data-count="completed">{progress.completed}</dd>
            </div>
            <div>
              <dt>Failed</dt>
              <dd data-count="failed">{progress.failed}</dd>
            </div>
            <div>
              <dt>Cancelled</dt>
              <dd>{progress.cancelled}</dd>
            </div>
            <div>
              <dt>Contacts done</dt>
              <dd>{progress.processed_rows} of {progress.total_rows}</dd>
            </div>
            {dispatch && (
              <>
                <div>
                  <dt>Rate (achieved / limit)</dt>
                  <dd>
                    {dispatch.rate_achieved_per_second.toFixed(2)} / {dispatch.rate_limit_per_second} per second
                  </dd>
                </div>
                <div>
                  <dt>Concurrency</dt>
                  <dd>{dispatch.live_calls} / {dispatch.max_concurrency ?? "no limit"}</dd>
                </div>
                <div>
                  <dt>Circuit breaker</dt>
                  <dd>
                    {dispatch.breaker.enabled ?
                      `${
                        dispatch.breaker.state === "tripped" ? "Tripped" : "Closed"
                      } (${dispatch.breaker.failures_in_window} of ${dispatch.breaker.calls_in_window} failed)` :
                      "Off"}
                  </dd>
                </div>
                <div>
                  <dt>Calling window</dt>
                  <dd>{dispatch.within_schedule ? "Open" : `Closed until ${formatDate(dispatch.next_window_at)}`}</dd>
                </div>
              </>
            )}
          </dl>
        </>
      )}
    </section>
  )
}
