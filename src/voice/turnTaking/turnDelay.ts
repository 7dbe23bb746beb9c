import { predictedEndpointing } from "./endpointing.ts"
import { callerText, type TurnState } from "./state.ts"

/** The silence that ends the caller's turn: the model's verdict when one came for this stop, else the heuristic's. */
export const turnDelay = (state: TurnState): number => {
  const { caller, settings } = state
  if (caller.completeProbability !== null) return predictedEndpointing(caller.completeProbability, settings)
  return state.endpointing(callerText(caller), {
    agentAskedQuestion: state.agentAskedQuestion,
    punctuated: state.punctuated
  }, settings)
}
