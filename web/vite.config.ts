import react from "@vitejs/plugin-react"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

const api = process.env.TALKGRAPH_URL ?? "http://127.0.0.1:8000"

/** The console's build: `web/dist`, served by the server at `/`; `npm run dev` proxies the API to a running server. */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", chunkSizeWarningLimit: 800 },
  server: {
    proxy: Object.fromEntries(["/api", "/docs", "/openapi.json"].map((path) => [path, { target: api, ws: true }]))
  }
})
