import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/distBuild.ts", "test/support/globalSetup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file starts its own server and database; two at a time fits this 2-core machine.
    maxWorkers: 2,
    minWorkers: 1
  }
})
