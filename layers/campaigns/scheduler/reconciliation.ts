import { Clock, Effect, Option } from "effect"
import type { CarrierAccountsShape } from "../../../services/CarrierAccounts.ts"
import type { DialerRepoShape, OverdueAttempt } from "../../../services/DialerRepo.ts"
import type { TelephonyShape } from "../../../services/Telephony.ts"

/**
 * A call whose final event never came by its deadline: asks the carrier how it ended; a call the
 * carrier still reports live (or cannot report) is hung up and recorded as failed, so its slot is
 * freed either way. An attempt with no provider call id never reached the carrier as far as we
 * know (its process died mid-request): it is failed, never dialled again blindly.
 */
export const reconcileOverdue = (
  attempt: OverdueAttempt,
  repo: DialerRepoShape,
  accounts: CarrierAccountsShape,
  telephony: TelephonyShape
) =>
  Effect.gen(function*() {
    const account = attempt.telephony_configuration_id === null
      ? Option.none()
      : yield* accounts.forConfiguration(attempt.organization_id, attempt.telephony_configuration_id)
    let outcome = null as null | {
      outcome: "completed" | "busy" | "no-answer" | "voicemail" | "failed" | "canceled"
      duration: number | null
    }
    if (attempt.provider_call_id !== null && Option.isSome(account)) {
      const adapter = telephony.adapter(account.value.provider)
      const call = { providerCallId: attempt.provider_call_id, liveCallId: attempt.live_call_id }
      const status = yield* adapter.callStatus(account.value, call).pipe(Effect.option)
      if (Option.isSome(status) && status.value.outcome !== null) {
        outcome = { outcome: status.value.outcome, duration: status.value.durationSeconds }
      } else {
        // The carrier's answer may name the live call where no callback did.
        const liveCallId = Option.isSome(status) ? status.value.liveCallId ?? call.liveCallId : call.liveCallId
        yield* adapter.hangUp(account.value, { ...call, liveCallId }).pipe(Effect.ignore)
      }
    }
    const applied = yield* repo.applyOutcome({
      attemptId: attempt.id,
      outcome: outcome?.outcome ?? "failed",
      endReason: outcome
        ? `reconciled_${outcome.outcome}`
        : attempt.provider_call_id === null
        ? "no_carrier_response"
        : "deadline_exceeded",
      durationSeconds: outcome?.duration ?? null,
      providerCallId: null,
      now: yield* Clock.currentTimeMillis
    })
    if (applied) {
      yield* Effect.logWarning("call reconciled after its deadline", {
        attempt_id: attempt.id,
        outcome: outcome?.outcome ?? "failed"
      })
    }
    return applied
  }).pipe(
    Effect.withSpan("CampaignScheduler.reconcile", {
      attributes: { "attempt.id": attempt.id, "campaign.id": attempt.campaign_id }
    })
  )
