import { type FormEvent, useState } from "react"
import { api } from "../api/client.ts"
import { type ApiProblem, messageOf, ok } from "../api/problems.ts"
import { navigate } from "../router.tsx"

/** From a use case and a description, the organization's LLM writes the agent; it opens in the editor. */
export const NewAgentPage = () => {
  const [callType, setCallType] = useState<"inbound" | "outbound">("outbound")
  const [useCase, setUseCase] = useState("")
  const [description, setDescription] = useState("")
  const [problem, setProblem] = useState<string>()
  const [fieldProblems, setFieldProblems] = useState<Record<string, string>>({})
  const [busy, setBusy] = useState(false)

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setProblem(undefined)
    setFieldProblems({})
    try {
      const created = await ok(api.POST("/api/v1/workflow/create/template", {
        body: { call_type: callType, use_case: useCase, activity_description: description }
      }))
      navigate(`/agents/${created.id}`)
    } catch (error) {
      setProblem(messageOf(error))
      const fields = (error as Partial<ApiProblem>).fields ?? []
      setFieldProblems(Object.fromEntries(fields.map((field) => [field.field, field.message])))
      setBusy(false)
    }
  }

  return (
    <section className="narrow">
      <h1>New agent</h1>
      <p>
        Describe what the agent is for. Your organization's language model writes its greeting, prompts, steps and the
        variables it collects; you can change everything in the editor afterwards.
      </p>
      <form onSubmit={submit}>
        <fieldset>
          <legend>Calls</legend>
          <label className="inline">
            <input
              type="radio"
              name="call_type"
              checked={callType === "outbound"}
              onChange={() => setCallType("outbound")}
            />
            Outbound (the agent calls)
          </label>
          <label className="inline">
            <input
              type="radio"
              name="call_type"
              checked={callType === "inbound"}
              onChange={() => setCallType("inbound")}
            />
            Inbound (people call the agent)
          </label>
        </fieldset>
        <label>
          Use case
          <input
            required
            maxLength={200}
            value={useCase}
            onChange={(e) => setUseCase(e.target.value)}
            placeholder="Lead qualification"
            aria-invalid={fieldProblems.use_case ? true : undefined}
          />
          {fieldProblems.use_case && <span className="field-problem">{fieldProblems.use_case}</span>}
        </label>
        <label>
          Description
          <textarea
            required
            maxLength={4000}
            rows={5}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            placeholder="Call leads who asked for a demo, qualify them and book a meeting."
            aria-invalid={fieldProblems.activity_description ? true : undefined}
          />
          {fieldProblems.activity_description && (
            <span className="field-problem">{fieldProblems.activity_description}</span>
          )}
        </label>
        {problem && <p className="problem" role="alert">{problem}</p>}
        <button type="submit" disabled={busy}>{busy ? "Writing the agent…" : "Create agent"}</button>
      </form>
    </section>
  )
}
