import { Either, ParseResult, Schema } from "effect"
import type { FieldProblem } from "../domain/errors.ts"
import { carrySecrets, ProviderConfig } from "./providerConfig.ts"

/** Schema issues as FastAPI-style field problems under `at`. */
export const problemsOf = (error: ParseResult.ParseError, at: ReadonlyArray<string>): Array<FieldProblem> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    loc: [...at, ...issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)))],
    msg: issue._tag === "Missing"
      ? "Field required"
      : issue._tag === "Unexpected"
      ? "Extra inputs are not permitted"
      : issue.message,
    type: issue._tag === "Missing" ? "missing" : issue._tag === "Unexpected" ? "extra_forbidden" : "value_error"
  }))

// A misspelt or misplaced field is refused by name rather than dropped in silence.
const decodeConfig = Schema.decodeUnknownEither(ProviderConfig, { errors: "all", onExcessProperty: "error" })

const secretProblem = (name: string, message: string): FieldProblem => ({
  loc: ["body", "config", name],
  msg: `${message}: a stored secret is only kept while provider, account and api_base_url stay the same`,
  type: "value_error"
})

/**
 * A configuration update's provider fields merged over what is stored: omitted or masked secrets
 * are carried over where the rule for stored credentials allows it, and every problem of the
 * result is reported at once, naming the secrets that must be sent again.
 */
export const updatedConfig = (
  stored: { readonly config: Readonly<Record<string, unknown>>; readonly secrets: Readonly<Record<string, string>> },
  given: Readonly<Record<string, unknown>>
): Either.Either<ProviderConfig, ReadonlyArray<FieldProblem>> => {
  const { merged, withheld, maskedOnly } = carrySecrets(stored, given)
  const decoded = decodeConfig(merged)
  const problems = [
    ...maskedOnly.map((name) => secretProblem(name, "This is a masked value; send the real secret")),
    ...(Either.isLeft(decoded) ? problemsOf(decoded.left, ["body", "config"]) : [])
      .filter((problem) => !maskedOnly.includes(String(problem.loc[2])))
      .map((problem) =>
        problem.type === "missing" && withheld.includes(String(problem.loc[2]))
          ? secretProblem(String(problem.loc[2]), `Send ${problem.loc[2]} again`)
          : problem
      )
  ]
  return problems.length > 0 || Either.isLeft(decoded) ? Either.left(problems) : Either.right(decoded.right)
}
