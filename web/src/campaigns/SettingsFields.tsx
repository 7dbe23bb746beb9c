import type { ReactNode } from "react"
import type { Schemas } from "../api/client.ts"

export const FieldProblem = ({ of }: { readonly of: string | undefined }) =>
  of ? <span className="field-problem">{of}</span> : null

export const NumberField = (
  { label, value, onChange, min, max, step, problem, hint }: {
    readonly label: string
    readonly value: string
    readonly onChange: (next: string) => void
    readonly min?: number
    readonly max?: number
    readonly step?: number
    readonly problem: string | undefined
    readonly hint?: ReactNode
  }
) => (
  <label>
    {label}
    <input
      type="number"
      inputMode="decimal"
      min={min}
      max={max}
      step={step}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      aria-invalid={problem ? true : undefined}
    />
    {hint && <span className="hint">{hint}</span>}
    <FieldProblem of={problem} />
  </label>
)

type Problems = Readonly<Record<string, string>>

/** When a call that did not get through is tried again. */
export const RetryFields = (
  { retry, setRetry, problems }: {
    readonly retry: Schemas["RetryConfigResponse"]
    readonly setRetry: (next: Schemas["RetryConfigResponse"]) => void
    readonly problems: Problems
  }
) => (
  <fieldset>
    <legend>Retries</legend>
    <label className="inline">
      <input
        type="checkbox"
        checked={retry.enabled}
        onChange={(e) => setRetry({ ...retry, enabled: e.target.checked })}
      />
      Call again when a call does not get through
    </label>
    <NumberField
      label="Retries per contact"
      min={0}
      max={10}
      value={String(retry.max_retries)}
      onChange={(v) => setRetry({ ...retry, max_retries: Number(v) })}
      problem={problems["retry_config.max_retries"]}
    />
    <NumberField
      label="Seconds between attempts"
      min={30}
      max={86400}
      value={String(retry.retry_delay_seconds)}
      onChange={(v) => setRetry({ ...retry, retry_delay_seconds: Number(v) })}
      problem={problems["retry_config.retry_delay_seconds"]}
    />
    <label className="inline">
      <input
        type="checkbox"
        checked={retry.retry_on_busy}
        onChange={(e) => setRetry({ ...retry, retry_on_busy: e.target.checked })}
      />
      Retry when busy
    </label>
    <label className="inline">
      <input
        type="checkbox"
        checked={retry.retry_on_no_answer}
        onChange={(e) => setRetry({ ...retry, retry_on_no_answer: e.target.checked })}
      />
      Retry when not answered
    </label>
    <label className="inline">
      <input
        type="checkbox"
        checked={retry.retry_on_voicemail}
        onChange={(e) => setRetry({ ...retry, retry_on_voicemail: e.target.checked })}
      />
      Retry when voicemail answered
    </label>
  </fieldset>
)

/** When failing calls pause the campaign. */
export const BreakerFields = (
  { breaker, setBreaker, problems }: {
    readonly breaker: Schemas["CircuitBreakerConfigResponse"]
    readonly setBreaker: (next: Schemas["CircuitBreakerConfigResponse"]) => void
    readonly problems: Problems
  }
) => (
  <fieldset>
    <legend>Circuit breaker</legend>
    <label className="inline">
      <input
        type="checkbox"
        checked={breaker.enabled}
        onChange={(e) => setBreaker({ ...breaker, enabled: e.target.checked })}
      />
      Pause the campaign when too many calls fail
    </label>
    <NumberField
      label="Failed share that pauses (0 to 1)"
      min={0}
      max={1}
      step={0.05}
      value={String(breaker.failure_threshold)}
      onChange={(v) => setBreaker({ ...breaker, failure_threshold: Number(v) })}
      problem={problems["circuit_breaker.failure_threshold"]}
    />
    <NumberField
      label="Window in seconds"
      min={30}
      max={3600}
      value={String(breaker.window_seconds)}
      onChange={(v) => setBreaker({ ...breaker, window_seconds: Number(v) })}
      problem={problems["circuit_breaker.window_seconds"]}
    />
    <NumberField
      label="Calls in the window before judging"
      min={1}
      max={1000}
      value={String(breaker.min_calls_in_window)}
      onChange={(v) => setBreaker({ ...breaker, min_calls_in_window: Number(v) })}
      problem={problems["circuit_breaker.min_calls_in_window"]}
    />
  </fieldset>
)
