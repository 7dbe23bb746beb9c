#!/usr/bin/env node
// Runs the compiled JavaScript in dist/. In a source checkout dist/ is brought up to date first, so
// no command ever runs a stale or missing build; the server is then this same process.
import { buildDist, isSourceCheckout } from "./buildDist.js"

if (isSourceCheckout()) {
  try {
    buildDist()
  } catch {
    console.error("talkgraph: the sources do not compile (see above); nothing was started")
    process.exit(1)
  }
}
await import("../dist/app/main.js")
