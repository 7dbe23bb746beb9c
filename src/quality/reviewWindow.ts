import { Either } from "effect"
import { checkedWindow, parseDateBound } from "../usage/dates.ts"

/**
 * The review-time window of `from` and `to` (inclusive, a date alone meaning that whole UTC day),
 * or the query parameter that is wrong and why.
 */
export const reviewWindow = (
  from: string | undefined,
  to: string | undefined
): Either.Either<{ from?: Date; before?: Date }, { readonly at: "from" | "to"; readonly message: string }> => {
  const start = from === undefined ? undefined : parseDateBound(from)
  if (start && Either.isLeft(start)) return Either.left({ at: "from", message: start.left })
  const end = to === undefined ? undefined : parseDateBound(to)
  if (end && Either.isLeft(end)) return Either.left({ at: "to", message: end.left })
  const window = checkedWindow(start?.right, end?.right)
  if (Either.isLeft(window)) return Either.left({ at: "to", message: "to must not be before from" })
  return Either.right({
    ...(window.right.from ? { from: window.right.from } : {}),
    ...(window.right.before ? { before: window.right.before } : {})
  })
}
