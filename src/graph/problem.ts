/**
 * One reason a workflow definition cannot run, pointing at what to fix: the node or edge id, the
 * field inside it, and the path from the definition root (for FastAPI-style `loc`).
 */
export interface GraphProblem {
  readonly kind: "workflow" | "node" | "edge"
  readonly id: string | null
  readonly field: string | null
  readonly path: ReadonlyArray<string | number>
  /** Stable identifier of the rule that failed, e.g. `node_unreachable`. */
  readonly rule: string
  readonly message: string
  /**
   * `structure` problems make the value not a graph at all (it cannot even be saved as a draft);
   * `readiness` problems only stop it from being published or run.
   */
  readonly stage: "structure" | "readiness"
}
