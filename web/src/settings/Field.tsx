import { type InputHTMLAttributes, type ReactNode, useId } from "react"

/** A labelled input with its hint and the API's problem with it beside it. */
export const Field = (
  { label, hint, problem, ...input }: InputHTMLAttributes<HTMLInputElement> & {
    readonly label: ReactNode
    readonly hint?: ReactNode
    readonly problem?: string | undefined
  }
) => {
  const id = useId()
  const described = [hint ? `${id}-hint` : "", problem ? `${id}-problem` : ""].filter(Boolean).join(" ")
  // The label names the input alone; hint and problem describe it (a label around them would put them in its name).
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        {...input}
        id={id}
        aria-invalid={problem ? true : undefined}
        aria-describedby={described || undefined}
      />
      {hint && <span id={`${id}-hint`} className="hint">{hint}</span>}
      {problem && <span id={`${id}-problem`} className="field-problem">{problem}</span>}
    </div>
  )
}

/** The summary of what the API refused, announced as it appears. */
export const Problem = ({ message }: { readonly message: string | undefined }) =>
  message ? <p className="problem" role="alert">{message}</p> : null
