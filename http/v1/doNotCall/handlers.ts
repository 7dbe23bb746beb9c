import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import { DoNotCall } from "../../../services/DoNotCall.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

const read = requireScope("campaigns:read")
const write = requireScope("campaigns:write")

export const DoNotCallHandlers = HttpApiBuilder.group(Api, "doNotCall", (handlers) =>
  Effect.gen(function*() {
    const list = yield* DoNotCall
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(read, (principal) => list.list(principal, urlParams)).pipe(
          Effect.map(({ items, total }) => ({
            numbers: items,
            total_count: total,
            page: urlParams.page,
            limit: urlParams.limit
          }))
        ))
      .handle("add", ({ payload }) => Effect.flatMap(write, (principal) => list.add(principal, payload)))
      .handle("import", ({ payload }) =>
        Effect.flatMap(write, (principal) =>
          list.importCsv(principal, payload.source_id, payload.default_region)))
      .handle("export", () =>
        Effect.map(read, (principal) =>
          HttpServerResponse.stream(Stream.encodeText(list.exportCsv(principal)), {
            contentType: "text/csv; charset=utf-8",
            headers: { "content-disposition": `attachment; filename="do-not-call.csv"` }
          })))
      .handle("remove", ({ path }) =>
        Effect.flatMap(write, (principal) =>
          list.remove(principal, path.phone_number)).pipe(Effect.as({})))
  }))
