#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx), so there is no build step to forget.
import { register } from "tsx/esm/api"

register()
await import("../app/main.ts")
