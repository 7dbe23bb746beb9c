export { AgentTestRunsLive } from "./agentTestRuns.ts"
export { AgentTestsLive } from "./agentTests.ts"
