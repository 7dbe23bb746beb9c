import { Either, Schema } from "effect"
import type { FieldProblem } from "../../src/domain/errors.ts"
import { isMaskedKey } from "../../src/domain/secretMask.ts"
import { problemsOf } from "../../src/telephony/configUpdate.ts"
import {
  type CredentialData,
  credentialDataSchemas,
  type CredentialType,
  SECRET_FIELDS
} from "../../src/tools/credentialRecord.ts"

/** Stored data split into what may be shown and the secrets that are sealed. */
export const splitCredentialData = (type: CredentialType, data: CredentialData) => ({
  shown: Object.fromEntries(Object.entries(data).filter(([field]) => !SECRET_FIELDS[type].includes(field))),
  secrets: Object.fromEntries(Object.entries(data).filter(([field]) => SECRET_FIELDS[type].includes(field)))
})

/** `credential_data` checked against its type, every problem named under `body.credential_data`. */
export const decodeCredentialData = (
  type: CredentialType,
  given: Readonly<Record<string, unknown>>
): Either.Either<CredentialData, ReadonlyArray<FieldProblem>> => {
  const decoded = Schema.decodeUnknownEither(credentialDataSchemas[type] as Schema.Schema<CredentialData, unknown>, {
    errors: "all",
    onExcessProperty: "error"
  })(given)
  return Either.mapLeft(decoded, (error) => problemsOf(error, ["body", "credential_data"]))
}

/**
 * Data sent on an update merged over what is stored: a secret sent back masked keeps its stored
 * value while the type is unchanged. `replaced` says whether any secret was sent in clear (the
 * only way to move a credential to another host).
 */
export const mergedCredentialData = (
  stored: { readonly type: CredentialType; readonly data: CredentialData },
  type: CredentialType,
  given: Readonly<Record<string, unknown>>
): Either.Either<{ readonly data: CredentialData; readonly replaced: boolean }, ReadonlyArray<FieldProblem>> => {
  const merged: Record<string, unknown> = { ...given }
  const problems: Array<FieldProblem> = []
  let replaced = false
  for (const field of SECRET_FIELDS[type]) {
    const value = given[field]
    if (typeof value === "string" && isMaskedKey(value)) {
      const kept = stored.type === type ? stored.data[field] : undefined
      if (kept === undefined) {
        problems.push({
          loc: ["body", "credential_data", field],
          msg: "This is a masked value; send the real secret",
          type: "value_error"
        })
      } else merged[field] = kept
    } else if (value !== undefined) replaced = true
  }
  if (problems.length > 0) return Either.left(problems)
  return Either.map(decodeCredentialData(type, merged), (data) => ({ data, replaced }))
}
