import * as http from "node:http"
import type { AddressInfo } from "node:net"

interface OtlpExport {
  /** `/v1/traces`, `/v1/logs` or `/v1/metrics`. */
  readonly path: string
  /** The raw JSON text, to search for what must never be exported. */
  readonly text: string
  readonly body: any
}

interface OtlpCollector {
  /** The base URL to configure as `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string
  readonly exports: Array<OtlpExport>
  readonly close: () => Promise<void>
}

/** An OpenTelemetry collector's OTLP/HTTP JSON receiver on loopback that keeps what it is sent. */
export const startOtlpCollector = async (): Promise<OtlpCollector> => {
  const exports: Array<OtlpExport> = []
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      exports.push({ path: (request.url ?? "/").split("?")[0]!, text, body: JSON.parse(text) })
      response.writeHead(200, { "content-type": "application/json" })
      response.end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
