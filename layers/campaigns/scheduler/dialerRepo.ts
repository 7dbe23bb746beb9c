import { Effect, Layer } from "effect"
import { DialerRepo } from "../../../services/DialerRepo.ts"
import { dieOnSqlError } from "../../db/sqlDefects.ts"
import { makeContactClaims } from "./contactClaims.ts"
import { makeDialerRows } from "./dialerRows.ts"
import { makeOutcomeRows } from "./outcomeRows.ts"

/** The dialer's three row modules (campaign and attempt rows, claims, outcomes) as one repository, each method a span. */
export const DialerRepoLive = Layer.effect(
  DialerRepo,
  Effect.gen(function*() {
    const rows = yield* makeDialerRows
    const claims = yield* makeContactClaims
    const outcomes = yield* makeOutcomeRows
    return DialerRepo.of({
      loadCampaign: Effect.fn("DialerRepo.loadCampaign")(rows.loadCampaign, dieOnSqlError),
      dialPlanDefinition: Effect.fn("DialerRepo.dialPlanDefinition")(rows.dialPlanDefinition, dieOnSqlError),
      recentDispatches: Effect.fn("DialerRepo.recentDispatches")(rows.recentDispatches, dieOnSqlError),
      recordPlaced: Effect.fn("DialerRepo.recordPlaced")(rows.recordPlaced, dieOnSqlError),
      recordProgress: Effect.fn("DialerRepo.recordProgress")(rows.recordProgress, dieOnSqlError),
      refuseCallerId: Effect.fn("DialerRepo.refuseCallerId")(rows.refuseCallerId, dieOnSqlError),
      claim: Effect.fn("DialerRepo.claim")(claims.claim, dieOnSqlError),
      applyOutcome: Effect.fn("DialerRepo.applyOutcome")(outcomes.applyOutcome, dieOnSqlError),
      claimOverdue: Effect.fn("DialerRepo.claimOverdue")(outcomes.claimOverdue, dieOnSqlError),
      breakerOutcomes: Effect.fn("DialerRepo.breakerOutcomes")(outcomes.breakerOutcomes, dieOnSqlError),
      tripBreaker: Effect.fn("DialerRepo.tripBreaker")(outcomes.tripBreaker, dieOnSqlError),
      complete: Effect.fn("DialerRepo.complete")(outcomes.complete, dieOnSqlError),
      pauseWithReason: Effect.fn("DialerRepo.pauseWithReason")(outcomes.pauseWithReason, dieOnSqlError)
    })
  })
)
