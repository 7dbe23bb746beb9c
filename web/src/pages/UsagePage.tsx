import { useState } from "react"
import { download } from "../agentFile.ts"
import { api, type Schemas } from "../api/client.ts"
import { ok } from "../api/problems.ts"
import { useLoad } from "../useLoad.ts"

type Day = Schemas["DailyUsage"]
type Metric = "runs" | "minutes" | "service_tokens"

const metricLabels: Record<Metric, string> = { runs: "Conversations", minutes: "Minutes", service_tokens: "Tokens" }

const isoDate = (date: Date) => date.toISOString().slice(0, 10)

const DailyChart = ({ days, metric }: { readonly days: ReadonlyArray<Day>; readonly metric: Metric }) => {
  const max = Math.max(1, ...days.map((day) => day[metric]))
  const width = 720
  const height = 200
  const bar = width / Math.max(days.length, 1)
  return (
    <svg
      className="chart"
      viewBox={`0 0 ${width} ${height + 24}`}
      role="img"
      aria-label={`${metricLabels[metric]} per day`}
    >
      {days.map((day, index) => {
        const h = (day[metric] / max) * height
        return (
          <g key={day.date}>
            <rect x={index * bar + 2} y={height - h} width={Math.max(bar - 4, 1)} height={h} className="bar">
              <title>{`${day.date}: ${day[metric]} ${metricLabels[metric].toLowerCase()}`}</title>
            </rect>
            {(days.length <= 14 || index % Math.ceil(days.length / 10) === 0) && (
              <text x={index * bar + bar / 2} y={height + 16} textAnchor="middle" className="axis">
                {day.date.slice(5)}
              </text>
            )}
          </g>
        )
      })}
    </svg>
  )
}

/** Conversations, minutes and tokens per day over a period, as a chart, a table and a CSV file. */
export const UsagePage = () => {
  const [start, setStart] = useState(isoDate(new Date(Date.now() - 29 * 86_400_000)))
  const [end, setEnd] = useState(isoDate(new Date()))
  const [metric, setMetric] = useState<Metric>("runs")
  const [usage] = useLoad(
    () =>
      ok(api.GET("/api/v1/organizations/usage/daily-breakdown", {
        params: { query: { start_date: start, end_date: end } }
      })),
    [start, end]
  )

  const exportCsv = (days: ReadonlyArray<Day>) =>
    download(
      `usage-${start}-${end}.csv`,
      ["date,runs,minutes,duration_seconds,service_tokens"]
        .concat(
          days.map((day) => [day.date, day.runs, day.minutes, day.duration_seconds, day.service_tokens].join(","))
        )
        .join("\n") + "\n",
      "text/csv"
    )

  return (
    <section>
      <div className="page-head">
        <h1>Usage</h1>
        {usage.state === "ready" && (
          <button
            type="button"
            className="secondary"
            onClick={() => exportCsv(usage.value.days)}
          >
            Export CSV
          </button>
        )}
      </div>
      <div className="filters">
        <label>
          From
          <input type="date" value={start} required onChange={(e) => setStart(e.target.value)} />
        </label>
        <label>
          To
          <input type="date" value={end} required onChange={(e) => setEnd(e.target.value)} />
        </label>
        <label>
          Show
          <select value={metric} onChange={(e) => setMetric(e.target.value as Metric)}>
            {Object.entries(metricLabels).map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </label>
      </div>
      {usage.state === "loading" && <p role="status">Loading usage…</p>}
      {usage.state === "failed" && <p className="problem" role="alert">{usage.message}</p>}
      {usage.state === "ready" && (
        <>
          <p className="totals" role="status">
            {usage.value.total_runs} conversations · {usage.value.total_minutes} minutes ·{" "}
            {usage.value.total_service_tokens} tokens (days in {usage.value.timezone})
          </p>
          {usage.value.total_runs === 0 && (
            <p className="hint">No conversations in this period yet: try an agent from its editor.</p>
          )}
          <DailyChart days={usage.value.days} metric={metric} />
          <table>
            <caption className="visually-hidden">Usage per day</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Conversations</th>
                <th scope="col">Minutes</th>
                <th scope="col">Tokens</th>
              </tr>
            </thead>
            <tbody>
              {usage.value.days.filter((day) => day.runs > 0).map((day) => (
                <tr key={day.date}>
                  <td>{day.date}</td>
                  <td>{day.runs}</td>
                  <td>{day.minutes}</td>
                  <td>{day.service_tokens}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  )
}
