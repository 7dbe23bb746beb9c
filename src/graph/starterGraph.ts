import { Either, ParseResult, Schema } from "effect"
import { TemplateContent } from "./templateContent.ts"
import { validateDefinition } from "./validation.ts"

export interface StarterWorkflow {
  readonly name: string
  readonly definition: { readonly nodes: ReadonlyArray<unknown>; readonly edges: ReadonlyArray<unknown> }
  readonly dispositionCodes: ReadonlyArray<string>
}

const ROW = 160

/**
 * Wraps generated content in the starter graph: start (greeting + opening) → the steps → end, plus
 * one global node carrying the shared instructions. Returns the problems, phrased for the model
 * that wrote the content, when the content or the graph built from it is not usable.
 */
export const buildStarterWorkflow = (generated: unknown): Either.Either<StarterWorkflow, ReadonlyArray<string>> => {
  const decoded = Schema.decodeUnknownEither(TemplateContent, { errors: "all", onExcessProperty: "ignore" })(generated)
  if (Either.isLeft(decoded)) {
    return Either.left(
      ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((issue) =>
        `${issue.path.join(".") || "(root)"}: ${issue._tag === "Missing" ? "is required" : issue.message}`
      )
    )
  }
  const content = decoded.right
  const problems: Array<string> = []
  const nodeIdOf = new Map<string, string>([["start", "start"], ["end", "end"]])
  content.steps.forEach((step, index) => {
    if (nodeIdOf.has(step.key)) {
      problems.push(`steps.${index}.key: "${step.key}" is used twice or is reserved (start, end)`)
    } else nodeIdOf.set(step.key, `step_${step.key}`)
  })
  content.transitions.forEach((transition, index) => {
    for (const end of ["from", "to"] as const) {
      if (!nodeIdOf.has(transition[end])) {
        problems.push(`transitions.${index}.${end}: "${transition[end]}" is not "start", "end" or a step key`)
      }
    }
  })
  if (problems.length > 0) return Either.left(problems)

  const variables = content.extraction_variables
  const nodes = [
    {
      id: "start",
      type: "startCall",
      position: { x: 0, y: 0 },
      data: {
        name: "Start",
        greeting_type: "text",
        greeting: content.greeting,
        prompt: content.opening_prompt,
        allow_interrupt: true,
        add_global_prompt: true
      }
    },
    ...content.steps.map((step, index) => ({
      id: nodeIdOf.get(step.key)!,
      type: "agentNode",
      position: { x: 0, y: ROW * (index + 1) },
      data: { name: step.name, prompt: step.prompt, allow_interrupt: true, add_global_prompt: true }
    })),
    {
      id: "end",
      type: "endCall",
      position: { x: 0, y: ROW * (content.steps.length + 1) },
      data: {
        name: "End",
        prompt: content.closing_prompt,
        add_global_prompt: true,
        extraction_enabled: variables.length > 0,
        extraction_prompt: "Extract these details from the conversation.",
        extraction_variables: variables
      }
    },
    {
      id: "global",
      type: "globalNode",
      position: { x: 400, y: 0 },
      data: { name: "Global", prompt: content.global_prompt }
    }
  ]
  const edges = content.transitions.map((transition, index) => ({
    id: `edge_${index + 1}`,
    source: nodeIdOf.get(transition.from)!,
    target: nodeIdOf.get(transition.to)!,
    data: { label: transition.label, condition: transition.condition }
  }))
  const definition = { nodes, edges }
  const validation = validateDefinition(definition)
  if (validation.problems.length > 0) {
    return Either.left(validation.problems.map((problem) => problem.message.replace(/"step_([a-z0-9_]+)"/g, "\"$1\"")))
  }
  return Either.right({
    name: content.name.trim(),
    definition,
    dispositionCodes: [...new Set(content.disposition_codes)]
  })
}
