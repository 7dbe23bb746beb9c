import { useCallback, useState } from "react"
import { ApiProblem, messageOf } from "../api/problems.ts"

/** The outcome of a form's last submission: the summary, and each field's problem by its path. */
export interface ActionState {
  readonly busy: boolean
  readonly problem: string | undefined
  readonly fields: Readonly<Record<string, string>>
}

/**
 * Runs a form's request once at a time and keeps what the API refused in words: the summary for
 * an alert, the field problems (`llm.api_key`, `config.auth_token`…) for beside their fields.
 */
export const useAction = () => {
  const [state, setState] = useState<ActionState>({ busy: false, problem: undefined, fields: {} })
  const run = useCallback(async <T>(action: () => Promise<T>): Promise<T | undefined> => {
    setState({ busy: true, problem: undefined, fields: {} })
    try {
      const result = await action()
      setState({ busy: false, problem: undefined, fields: {} })
      return result
    } catch (error) {
      const fields = error instanceof ApiProblem ? error.fields : []
      setState({
        busy: false,
        problem: messageOf(error),
        fields: Object.fromEntries(fields.map((field) => [field.field, field.message]))
      })
      return undefined
    }
  }, [])
  const clear = useCallback(() => setState({ busy: false, problem: undefined, fields: {} }), [])
  return [state, run, clear] as const
}
