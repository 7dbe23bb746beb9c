// The HTTP API for an application embedding talkgraph: `import { ApiAppLive } from "talkgraph/http"`.
export * from "./api.ts"
export * from "./server.ts"
