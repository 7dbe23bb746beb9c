import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import { type UsageCriteria, UsageReports } from "../../../services/UsageReports.ts"
import type { DateBound } from "../../../src/usage/dates.ts"
import type { UsageFilter } from "../../../src/usage/filters.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

const criteriaOf = (query: {
  readonly start_date?: DateBound | undefined
  readonly end_date?: DateBound | undefined
  readonly filters: ReadonlyArray<UsageFilter>
}): UsageCriteria => ({
  start: query.start_date,
  end: query.end_date,
  filters: query.filters
})

export const UsageHandlers = HttpApiBuilder.group(Api, "usage", (handlers) =>
  Effect.gen(function*() {
    const usage = yield* UsageReports
    return handlers
      .handle("runs", ({ urlParams }) =>
        requireScope("usage:read").pipe(Effect.flatMap((principal) =>
          usage.runs(principal, criteriaOf(urlParams), { sortBy: urlParams.sort_by, sortOrder: urlParams.sort_order }, {
            page: urlParams.page,
            limit: urlParams.limit
          })
        )))
      .handle("report", ({ urlParams }) =>
        requireScope("usage:read").pipe(
          Effect.flatMap((principal) =>
            usage.runsCsv(principal, criteriaOf(urlParams), {
              sortBy: urlParams.sort_by,
              sortOrder: urlParams.sort_order
            })
          ),
          Effect.map((csv) =>
            HttpServerResponse.stream(Stream.encodeText(csv), {
              contentType: "text/csv; charset=utf-8",
              headers: { "content-disposition": "attachment; filename=\"usage-runs.csv\"" }
            })
          )
        ))
      .handle("dailyBreakdown", ({ urlParams }) =>
        requireScope("usage:read").pipe(Effect.flatMap((principal) =>
          usage.dailyBreakdown(principal, criteriaOf(urlParams))
        )))
  }))
