import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CreateTestCaseRequest, TestCase, UpdateTestCaseRequest } from "../../../src/agentTests/testCase.ts"
import { CreateTestRunRequest, TestRun } from "../../../src/agentTests/testRunRecord.ts"
import { EmptyObject } from "../../../src/domain/wireTypes.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { IdFromPath, pathSchema } from "../../requestSchemas.ts"
import { V2Auth } from "../../security.ts"
import { Collection, PageQuery, Resource } from "../envelopes.ts"

const AgentId = IdFromPath.pipe(Schema.brand("WorkflowId"))
const AgentPath = pathSchema("AgentTests", { agent_id: AgentId })
const TestPath = pathSchema("AgentTest", { agent_id: AgentId, test_id: IdFromPath })
const TestRunPath = pathSchema("AgentTestRun", { agent_id: AgentId, run_id: IdFromPath })

/** Test cases and test runs of an agent; `tests:read` to read, `tests:write` to change or run. */
export const AgentTestsApi = HttpApiGroup.make("agentTests")
  .annotate(
    OpenApi.Description,
    "Simulated callers: an agent's test cases (persona, variables, turn limit, expectations) and test runs that play them against a draft or published version through the text chat engine. Needs an API key with `tests:read` (read) or `tests:write` (change, run)."
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v2/agents/:agent_id/tests")
      .annotate(OpenApi.Summary, "List an agent's test cases")
      .annotate(OpenApi.Description, "Oldest first, paginated with `page` and `page_size`.")
      .setPath(AgentPath)
      .setUrlParams(PageQuery)
      .addSuccess(Collection(TestCase))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v2/agents/:agent_id/tests")
      .annotate(OpenApi.Summary, "Add a test case")
      .annotate(
        OpenApi.Description,
        "A persona for the LLM playing the caller, the contact's variables, a turn limit (default 10) and expectations checked after the conversation."
      )
      .setPath(AgentPath)
      .setPayload(CreateTestCaseRequest)
      .addSuccess(Resource(TestCase), { status: 201 })
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v2/agents/:agent_id/tests/:test_id")
      .annotate(OpenApi.Summary, "Get a test case")
      .annotate(OpenApi.Description, "One case with its persona, variables, turn limit and expectations.")
      .setPath(TestPath)
      .addSuccess(Resource(TestCase))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.put("update", "/api/v2/agents/:agent_id/tests/:test_id")
      .annotate(OpenApi.Summary, "Change a test case")
      .annotate(OpenApi.Description, "Changes the fields given; runs already started keep the case as it was.")
      .setPath(TestPath)
      .setPayload(UpdateTestCaseRequest)
      .addSuccess(Resource(TestCase))
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.del("remove", "/api/v2/agents/:agent_id/tests/:test_id")
      .annotate(OpenApi.Summary, "Delete a test case")
      .annotate(OpenApi.Description, "Removes the case; runs that already played it keep their results.")
      .setPath(TestPath)
      .addSuccess(EmptyObject)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("propose", "/api/v2/agents/:agent_id/tests/generate")
      .annotate(OpenApi.Summary, "Propose test cases")
      .annotate(
        OpenApi.Description,
        "Proposes a case for every transition of the agent's latest definition (draft, else published): a persona asked to meet, in order, the conditions of the shortest path that takes it, the path's nodes expected visited, sample values for the variables its prompts use. Nothing is stored: edit the proposals and add them with POST …/tests."
      )
      .setPath(AgentPath)
      .addSuccess(Resource(Schema.Array(CreateTestCaseRequest)))
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.post("startRun", "/api/v2/agents/:agent_id/test-runs")
      .annotate(OpenApi.Summary, "Run test cases")
      .annotate(
        OpenApi.Description,
        "Plays the chosen cases (default all), `repetitions` times each, `concurrency` at once, against the agent's `version` (and `compare_with` for a side-by-side comparison). Answers at once with the queued run; poll it until `status` is completed or failed. Each conversation is a `testchat` run (in `mode: voice`, a `testcall` call on an in-process line), billed to usage; no number is dialled."
      )
      .setPath(AgentPath)
      .setPayload(CreateTestRunRequest)
      .addSuccess(Resource(TestRun), { status: 202 })
      .addError(HttpNotFound)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.get("listRuns", "/api/v2/agents/:agent_id/test-runs")
      .annotate(OpenApi.Summary, "List an agent's test runs")
      .annotate(OpenApi.Description, "Newest first, paginated with `page` and `page_size`.")
      .setPath(AgentPath)
      .setUrlParams(PageQuery)
      .addSuccess(Collection(TestRun))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.get("getRun", "/api/v2/agents/:agent_id/test-runs/:run_id")
      .annotate(OpenApi.Summary, "Get a test run")
      .annotate(
        OpenApi.Description,
        "Its status and, per case and version, the pass rate over repetitions, each conversation's transcript and failed expectations with their reasons, and the version comparison when one was asked."
      )
      .setPath(TestRunPath)
      .addSuccess(Resource(TestRun))
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .middleware(V2Auth)
