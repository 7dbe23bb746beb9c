import { useState } from "react"
import { api } from "../api/client.ts"
import { ok } from "../api/problems.ts"
import { Link } from "../router.tsx"
import { useLoad } from "../useLoad.ts"
import { formatDate } from "./campaignStates.ts"

const LIMIT = 20

/** The organization's campaigns, newest first: state, how far each got, its agent. */
export const CampaignsPage = () => {
  const [page, setPage] = useState(1)
  const [campaigns] = useLoad(
    () => ok(api.GET("/api/v1/campaign", { params: { query: { page, limit: LIMIT } } })),
    [page]
  )
  return (
    <section>
      <div className="page-head">
        <h1>Campaigns</h1>
        <Link href="/campaigns/new" className="button">New campaign</Link>
      </div>
      {campaigns.state === "loading" && <p role="status">Loading campaigns…</p>}
      {campaigns.state === "failed" && <p role="alert" className="problem">{campaigns.message}</p>}
      {campaigns.state === "ready" && campaigns.value.total_count === 0 && (
        <div className="empty">
          <p>No campaigns yet.</p>
          <p className="hint">
            A campaign calls every number of a CSV file with one of your agents. You need a published agent and a
            telephony configuration with a caller number; then upload the contacts with{" "}
            <Link href="/campaigns/new">New campaign</Link>.
          </p>
        </div>
      )}
      {campaigns.state === "ready" && campaigns.value.total_count > 0 && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Campaign</th>
                <th scope="col">State</th>
                <th scope="col">Progress</th>
                <th scope="col">Agent</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {campaigns.value.campaigns.map((campaign) => {
                const total = campaign.total_rows ?? 0
                return (
                  <tr key={campaign.id}>
                    <td>
                      <Link href={`/campaigns/${campaign.id}`}>{campaign.name}</Link>
                    </td>
                    <td>
                      <span className={`badge ${campaign.state}`}>{campaign.state}</span>
                    </td>
                    <td>
                      {campaign.import.status === "loading" ?
                        `Loading contacts (${Math.round(campaign.import.progress * 100)}%)` :
                        (
                          <>
                            <progress max={Math.max(total, 1)} value={campaign.processed_rows} aria-hidden="true" />
                            {` ${campaign.processed_rows} of ${total} contacts done`}
                          </>
                        )}
                    </td>
                    <td>{campaign.workflow_name}</td>
                    <td>{formatDate(campaign.created_at)}</td>
                  </tr>
                )
              })}
            </tbody>
          </table>
          {campaigns.value.total_pages > 1 && (
            <nav className="pagination" aria-label="Pages">
              <button type="button" className="secondary" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                Previous
              </button>
              <span>Page {page} of {campaigns.value.total_pages}</span>
              <button
                type="button"
                className="secondary"
                disabled={page >= campaigns.value.total_pages}
                onClick={() => setPage(page + 1)}
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
