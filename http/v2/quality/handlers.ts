import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either } from "effect"
import { QualityReviews } from "../../../services/QualityReviews.ts"
import { ValidationFailed } from "../../../src/domain/errors.ts"
import { reviewWindow } from "../../../src/quality/reviewWindow.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

const windowOf = (from: string | undefined, to: string | undefined) =>
  Either.match(reviewWindow(from, to), {
    onLeft: (wrong) => Effect.fail(ValidationFailed.single(["query", wrong.at], wrong.message)),
    onRight: Effect.succeed
  })

export const QualityHandlers = HttpApiBuilder.group(Api, "quality", (handlers) =>
  Effect.gen(function*() {
    const reviews = yield* QualityReviews
    const reader = requireScope("conversations:read")
    return handlers
      .handle("perDay", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const principal = yield* reader
          const window = yield* windowOf(urlParams.from, urlParams.to)
          const days = yield* reviews.perDay(principal, path.agent_id, window)
          return { data: { agent_id: path.agent_id, days } }
        }))
      .handle("export", ({ urlParams }) =>
        Effect.gen(function*() {
          const principal = yield* reader
          const window = yield* windowOf(urlParams.from, urlParams.to)
          if (
            urlParams.min_score !== undefined && urlParams.max_score !== undefined &&
            urlParams.min_score > urlParams.max_score
          ) {
            return yield* ValidationFailed.single(
              ["query", "min_score"],
              "min_score must not be greater than max_score"
            )
          }
          return yield* reviews.exportCsv(principal, {
            ...window,
            agentId: urlParams.agent_id,
            minScore: urlParams.min_score,
            maxScore: urlParams.max_score,
            tag: urlParams.tag
          })
        }))
  }))
