import { type DependencyList, useCallback, useEffect, useState } from "react"
import { messageOf } from "./api/problems.ts"

export type Loaded<T> =
  | { readonly state: "loading" }
  | { readonly state: "failed"; readonly message: string }
  | { readonly state: "ready"; readonly value: T }

/** Loads once per change of `deps`; `reload` asks again (after a change the page made). */
export const useLoad = <T>(load: () => Promise<T>, deps: DependencyList) => {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: "loading" })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    load().then(
      (value) => current && setLoaded({ state: "ready", value }),
      (error: unknown) => current && setLoaded({ state: "failed", message: messageOf(error) })
    )
    return () => {
      current = false
    }
  }, [...deps, round])
  const reload = useCallback(() => setRound((n) => n + 1), [])
  return [loaded, reload] as const
}
