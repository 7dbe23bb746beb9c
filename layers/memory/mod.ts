export { IDLE_WINDOW_MS, IdleMemoryReleaseLive, makeIdleMemoryRelease } from "./idleMemoryRelease.ts"
