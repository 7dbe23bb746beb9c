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
  return (
    <label>
      {label}
      <input {...input} aria-invalid={problem ? true : undefined} aria-describedby={described || undefined} />
      {hint && <span id={`${id}-hint`} className="hint">{hint}</span>}
      {problem && <span id={`${id}-problem`} className="field-problem">{problem}</span>}
    </label>
  )
}

/** The summary of what the API refused, announced as it appears. */
export const Problem = ({ message }: { readonly message: string | undefined }) =>
  message ? <p className="problem" role="alert">{message}</p> : null
