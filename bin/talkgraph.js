#!/usr/bin/env node
// Runs the compiled JavaScript in dist/. In a source checkout dist/ (and, to serve, the console's
// web/dist) is brought up to date first, so no command ever runs a stale or missing build; the
// server is then this same process: `npm start` execs into it, with no wrapper process left.
import { buildDist, isSourceCheckout } from "./buildDist.js"

if (isSourceCheckout()) {
  try {
    await buildDist()
    if (process.argv[2] === "serve") {
      const { buildConsoleIfStale } = await import("../web/tooling/buildIfStale.mjs")
      buildConsoleIfStale()
    }
  } catch (error) {
    // tsc and vite print their own errors (their exit status is on the error); anything else is said here.
    if (!(error instanceof Error && "status" in error)) console.error(`talkgraph: ${String(error?.message ?? error)}`)
    console.error("talkgraph: the sources do not build (see above); nothing was started")
    process.exit(1)
  }
}
await import("../dist/bundle/talkgraph.js")
