// talkgraph composed: `import { ServicesOnSqlClient, AppConfigLive } from "talkgraph"`.
export * from "./appLayer.ts"
export * from "./config.ts"
