import { Clock, Console, Data, Duration, Effect, Either, Schema } from "effect"
import * as fs from "node:fs/promises"
import { parseArgs } from "node:util"
import { junitReport } from "../src/agentTests/junitReport.ts"
import { TestedVersion, TestMode, TestRun } from "../src/agentTests/testRunRecord.ts"

export const testCommandUsage =
  "talkgraph test <agent id or name> [--suite CASE,…] [--repetitions N] [--concurrency N] [--version draft|published] [--compare-with draft|published] [--pass-threshold 0..1] [--mode text|voice] [--voice-speed 1..10] [--junit FILE] [--publish] [--url URL] [--api-key KEY] [--timeout SECONDS]"

/** A refusal or failure of the command, printed as one line; the process exits with 1. */
export class TestCommandFailed extends Data.TaggedError("TestCommandFailed")<{ readonly message: string }> {}

const fail = (message: string) => Effect.fail(new TestCommandFailed({ message }))

interface Options {
  readonly agent: string
  readonly suite: ReadonlyArray<string> | undefined
  readonly body: Record<string, unknown>
  readonly junit: string | undefined
  /** Publish the draft once the run on it passed. */
  readonly publish: boolean
  readonly url: string
  readonly apiKey: string
  readonly timeoutSeconds: number
}

const wholeNumber = (raw: string | undefined, flag: string, min: number, max: number) =>
  raw === undefined
    ? Either.right(undefined)
    : /^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max
    ? Either.right(Number(raw))
    : Either.left(`${flag} must be a whole number from ${min} to ${max}`)

const parse = (args: Array<string>, env: Readonly<Record<string, string | undefined>>) =>
  Effect.gen(function*() {
    const parsed = Either.try(() =>
      parseArgs({
        args,
        strict: true,
        allowPositionals: true,
        options: {
          suite: { type: "string" },
          repetitions: { type: "string" },
          concurrency: { type: "string" },
          version: { type: "string" },
          "compare-with": { type: "string" },
          "pass-threshold": { type: "string" },
          mode: { type: "string" },
          "voice-speed": { type: "string" },
          junit: { type: "string" },
          publish: { type: "boolean" },
          url: { type: "string" },
          "api-key": { type: "string" },
          timeout: { type: "string" }
        }
      })
    )
    if (Either.isLeft(parsed)) return yield* fail(`${(parsed.left as Error).message}\nUsage: ${testCommandUsage}`)
    const { positionals, values } = parsed.right
    const problems: Array<string> = []
    if (positionals.length !== 1) problems.push("name one agent (its id or name)")
    const repetitions = wholeNumber(values.repetitions, "--repetitions", 1, 20)
    const concurrency = wholeNumber(values.concurrency, "--concurrency", 1, 10)
    const timeout = wholeNumber(values.timeout, "--timeout", 1, 86_400)
    for (const value of [repetitions, concurrency, timeout]) if (Either.isLeft(value)) problems.push(value.left)
    const isVersion = Schema.is(TestedVersion)
    for (const flag of ["version", "compare-with"] as const) {
      if (values[flag] !== undefined && !isVersion(values[flag])) problems.push(`--${flag} must be draft or published`)
    }
    const threshold = values["pass-threshold"] === undefined ? undefined : Number(values["pass-threshold"])
    if (threshold !== undefined && !(threshold >= 0 && threshold <= 1)) {
      problems.push("--pass-threshold must be a number from 0 to 1")
    }
    if (values.mode !== undefined && !Schema.is(TestMode)(values.mode)) problems.push("--mode must be text or voice")
    const speed = values["voice-speed"] === undefined ? undefined : Number(values["voice-speed"])
    if (speed !== undefined && !(speed >= 1 && speed <= 10)) {
      problems.push("--voice-speed must be a number from 1 to 10")
    }
    if (speed !== undefined && values.mode !== "voice") problems.push("--voice-speed goes with --mode voice")
    if (values.publish === true && values.version === "published") {
      problems.push("--publish tests and publishes the draft; leave out --version published")
    }
    const apiKey = values["api-key"] ?? env.TALKGRAPH_API_KEY
    if (!apiKey) problems.push("an API key is needed: --api-key or TALKGRAPH_API_KEY")
    if (problems.length > 0) return yield* fail(`${problems.join("; ")}\nUsage: ${testCommandUsage}`)
    const url = (values.url ?? env.TALKGRAPH_URL ?? "http://127.0.0.1:8000").replace(/\/+$/, "")
    return {
      agent: positionals[0]!,
      suite: values.suite?.split(",").map((item) => item.trim()).filter((item) => item !== ""),
      body: {
        ...(Either.getOrUndefined(repetitions) === undefined ? {} : { repetitions: Either.getOrThrow(repetitions) }),
        ...(Either.getOrUndefined(concurrency) === undefined ? {} : { concurrency: Either.getOrThrow(concurrency) }),
        ...(values.version === undefined && values.publish !== true ? {} : { version: values.version ?? "draft" }),
        ...(values["compare-with"] === undefined ? {} : { compare_with: values["compare-with"] }),
        ...(threshold === undefined ? {} : { pass_threshold: threshold }),
        ...(values.mode === undefined ? {} : { mode: values.mode }),
        ...(speed === undefined ? {} : { voice_speed: speed })
      },
      junit: values.junit,
      publish: values.publish === true,
      url,
      apiKey: apiKey!,
      timeoutSeconds: Either.getOrUndefined(timeout) ?? 900
    } satisfies Options
  })

/** One request to the server; an error answer fails with the server's own message. */
const request = (options: Options, method: string, path: string, body?: unknown) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(`${options.url}${path}`, {
        method,
        headers: { "x-api-key": options.apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      let parsed: any = undefined
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = undefined
      }
      return { status: response.status, body: parsed }
    },
    catch: (error) => new TestCommandFailed({ message: `cannot reach ${options.url}: ${(error as Error).message}` })
  }).pipe(
    Effect.flatMap((reply) =>
      reply.status < 400 ? Effect.succeed(reply.body) : fail(
        `${method} ${path} answered ${reply.status}: ${
          reply.body?.error?.message ?? reply.body?.detail ?? "no details"
        }`
      )
    )
  )

/** Every item of a paginated v2 collection. */
const everything = (options: Options, path: string) =>
  Effect.gen(function*() {
    const items: Array<any> = []
    for (let page = 1;; page++) {
      const reply = yield* request(options, "GET", `${path}?page=${page}&page_size=100`)
      items.push(...reply.data)
      if (page >= reply.pagination.total_pages) return items
    }
  })

const resolveAgent = (options: Options) =>
  /^\d+$/.test(options.agent)
    ? Effect.map(request(options, "GET", `/api/v2/agents/${options.agent}`), (reply) => reply.data)
    : Effect.flatMap(everything(options, "/api/v2/agents"), (agents) => {
      const found = agents.filter((agent) => agent.name === options.agent)
      return found.length === 1
        ? Effect.succeed(found[0])
        : fail(
          found.length === 0
            ? `no agent named "${options.agent}"`
            : `several agents are named "${options.agent}"; give its id`
        )
    })

const resolveSuite = (options: Options, agentId: number) =>
  options.suite === undefined
    ? Effect.succeed(undefined)
    : Effect.flatMap(everything(options, `/api/v2/agents/${agentId}/tests`), (cases) => {
      const ids: Array<number> = []
      for (const wanted of options.suite!) {
        const found = cases.find((testCase) => String(testCase.id) === wanted || testCase.name === wanted)
        if (!found) return fail(`the agent has no test case "${wanted}"`)
        ids.push(found.id)
      }
      return Effect.succeed([...new Set(ids)])
    })

const decodeRun = (body: any) =>
  Schema.decodeUnknown(TestRun)(body?.data).pipe(
    Effect.mapError(() => new TestCommandFailed({ message: "the server's test run is not in the expected shape" }))
  )

const percent = (rate: number | null) => (rate === null ? "–" : `${Math.round(rate * 100)}%`)

const summary = (run: TestRun, agentName: string) => {
  const lines = [`Agent "${agentName}", test run ${run.id} (${run.version}): ${run.status}`]
  for (const result of run.cases) {
    const passed = result.pass_rate !== null && result.pass_rate >= run.pass_threshold - 1e-9
    lines.push(
      `${passed ? "PASS" : "FAIL"} ${result.name}${
        run.compare_with === null ? "" : ` [${result.version}]`
      }: ${result.passed}/${result.completed} (${percent(result.pass_rate)})`
    )
    for (const conversation of result.conversations.filter((conversation) => !conversation.passed)) {
      const reasons = conversation.error !== null
        ? [conversation.error]
        : conversation.failed_expectations.map((failure) => `${failure.expectation}: ${failure.reason}`)
      for (const reason of reasons) lines.push(`     #${conversation.repetition} ${reason}`)
    }
  }
  for (const row of run.comparison ?? []) {
    lines.push(
      `${row.name}: ${run.version} ${percent(row.pass_rate)} vs ${run.compare_with} ${percent(row.compare_pass_rate)}`
    )
  }
  return lines.join("\n")
}

/**
 * `talkgraph test`: starts a test run on a server over HTTP with an API key (`tests:write`, and
 * `agents:read` to name the agent), waits for it, prints the results, writes JUnit XML when asked
 * and fails (exit 1) unless every case reached the pass threshold. With `--publish` it runs on the
 * draft and publishes it once the run passed (`agents:write`): a CI pipeline's gate.
 */
export const testCommand = (args: Array<string>, env: Readonly<Record<string, string | undefined>> = process.env) =>
  Effect.gen(function*() {
    const options = yield* parse(args, env)
    const agent = yield* resolveAgent(options)
    const testIds = yield* resolveSuite(options, agent.id)
    const started = yield* request(options, "POST", `/api/v2/agents/${agent.id}/test-runs`, {
      ...options.body,
      ...(testIds === undefined ? {} : { test_ids: testIds })
    })
    let run = yield* decodeRun(started)
    const deadline = (yield* Clock.currentTimeMillis) + options.timeoutSeconds * 1000
    while (run.status === "queued" || run.status === "running") {
      if ((yield* Clock.currentTimeMillis) > deadline) {
        return yield* fail(`test run ${run.id} did not finish within ${options.timeoutSeconds} seconds`)
      }
      yield* Effect.sleep(Duration.millis(500))
      run = yield* decodeRun(yield* request(options, "GET", `/api/v2/agents/${agent.id}/test-runs/${run.id}`))
    }
    yield* Console.log(summary(run, agent.name))
    if (options.junit !== undefined) {
      const path = options.junit
      yield* Effect.tryPromise({
        try: () => fs.writeFile(path, junitReport(run, agent.name)),
        catch: (error) => new TestCommandFailed({ message: `cannot write ${path}: ${(error as Error).message}` })
      })
    }
    if (run.status === "failed") return yield* fail(`test run ${run.id} failed: ${run.error ?? "no reason given"}`)
    if (run.passed !== true) return yield* fail(`test run ${run.id}: some cases did not pass`)
    if (options.publish) {
      const published = yield* request(options, "POST", `/api/v1/workflow/${agent.id}/publish`)
      yield* Console.log(`Published version ${published?.version_number ?? "?"} of agent "${agent.name}"`)
    }
  })
