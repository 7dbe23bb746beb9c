import { identity } from "./0001_identity.ts"
import { workflows } from "./0002_workflows.ts"
import { runs } from "./0003_runs.ts"

/** Every schema change, in order. Keys are `NNNN_name`; never edit one that has shipped. */
export const migrations = {
  "0001_identity": identity,
  "0002_workflows": workflows,
  "0003_runs": runs
}
