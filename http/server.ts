import { HttpApiBuilder, type HttpApp, HttpMiddleware, type HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { AppConfig } from "../services/AppConfig.ts"
import { Api } from "./api.ts"
import { ConsoleRoutes } from "./consoleRoutes.ts"
import { DocsRoutes } from "./docsRoutes.ts"
import { ErrorShapeLive } from "./errorShape.ts"
import { describeListenFailure, ListenFailed } from "./listenFailure.ts"
import { requestTelemetry } from "./requestTelemetry.ts"
import { V1AuthLive, V2AuthLive } from "./security.ts"
import { ApiKeysHandlers } from "./v1/apiKeys/handlers.ts"
import { ArtifactsHandlers } from "./v1/artifacts/handlers.ts"
import { AuthHandlers } from "./v1/auth/handlers.ts"
import { CampaignsHandlers } from "./v1/campaigns/handlers.ts"
import { CompliancePolicyHandlers } from "./v1/compliancePolicy/handlers.ts"
import { CredentialsHandlers } from "./v1/credentials/handlers.ts"
import { DoNotCallHandlers } from "./v1/doNotCall/handlers.ts"
import { HealthHandlers } from "./v1/health/handlers.ts"
import { KnowledgeBaseHandlers } from "./v1/knowledgeBase/handlers.ts"
import { MembersHandlers } from "./v1/members/handlers.ts"
import { ModelConfigurationsHandlers } from "./v1/modelConfigurations/handlers.ts"
import { OperatorRoutes } from "./v1/operator/routes.ts"
import { PublicAgentHandlers } from "./v1/publicAgent/handlers.ts"
import { RecordingsHandlers } from "./v1/recordings/handlers.ts"
import { TelephonyConfigsHandlers } from "./v1/telephonyConfigs/handlers.ts"
import { TelephonyWebhooksHandlers } from "./v1/telephonyWebhooks/handlers.ts"
import { TextChatHandlers } from "./v1/textChat/handlers.ts"
import { ToolsHandlers } from "./v1/tools/handlers.ts"
import { LocalUploadsHandlers, UploadsHandlers } from "./v1/uploads/handlers.ts"
import { UsageHandlers } from "./v1/usage/handlers.ts"
import { VoiceCallsHandlers } from "./v1/voiceCalls/handlers.ts"
import { VoiceMediaRoutes } from "./v1/voiceCalls/mediaRoute.ts"
import { WebhooksHandlers } from "./v1/webhooks/handlers.ts"
import { WorkflowsHandlers } from "./v1/workflows/handlers.ts"
import { AgentsHandlers } from "./v2/agents/handlers.ts"
import { AgentTestsHandlers } from "./v2/agentTests/handlers.ts"
import { CallsHandlers } from "./v2/calls/handlers.ts"
import { ConversationsHandlers } from "./v2/conversations/handlers.ts"
import { V2KnowledgeBaseHandlers } from "./v2/knowledgeBase/handlers.ts"
import { QualityHandlers } from "./v2/quality/handlers.ts"
import { StatusHandlers } from "./v2/status/handlers.ts"
import { V2ToolsHandlers } from "./v2/tools/handlers.ts"

const HandlersLive = Layer.mergeAll(
  HealthHandlers,
  AuthHandlers,
  ApiKeysHandlers,
  MembersHandlers,
  StatusHandlers,
  UsageHandlers,
  WorkflowsHandlers,
  ModelConfigurationsHandlers,
  AgentsHandlers,
  UploadsHandlers,
  LocalUploadsHandlers,
  CampaignsHandlers,
  TelephonyConfigsHandlers,
  TextChatHandlers,
  ConversationsHandlers,
  QualityHandlers,
  TelephonyWebhooksHandlers,
  RecordingsHandlers,
  VoiceCallsHandlers,
  VoiceMediaRoutes,
  OperatorRoutes,
  ArtifactsHandlers,
  CallsHandlers,
  PublicAgentHandlers,
  WebhooksHandlers,
  CredentialsHandlers,
  DoNotCallHandlers,
  CompliancePolicyHandlers,
  ToolsHandlers,
  V2ToolsHandlers,
  AgentTestsHandlers,
  KnowledgeBaseHandlers,
  V2KnowledgeBaseHandlers,
  ConsoleRoutes
)

/** The API with its handlers, auth, error shaping and docs: everything but the socket. */
export const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide(HandlersLive),
  Layer.provide([V1AuthLive, V2AuthLive]),
  Layer.provide(ErrorShapeLive)
)

/**
 * How long an idle keep-alive connection stays open: longer than the idle timeout of the proxies
 * carriers reach us through (60 s on AWS's load balancers, nginx's upstream keep-alive), so it is
 * always the proxy that closes an idle connection. With Node's default of 5 s the server closed
 * connections the proxy was about to reuse, and the request on it failed (a 502 to the carrier,
 * whose status callback is then lost).
 */
const KEEP_ALIVE_MS = 65_000

/**
 * Connections the kernel holds for the server before it accepts them (capped by the system's
 * somaxconn). Carriers open a connection per callback: a campaign's burst of answers and ends
 * while the process is busy overflowed Node's default of 511, and the overflow was reset.
 */
const LISTEN_BACKLOG = 4096

/** How long responses already being written get to finish once the server is closing. */
const CLOSE_GRACE_MS = 1000

/**
 * A Node HTTP server whose `close` cannot hang. Node waits for every open connection to end; by
 * the time the platform closes the server its request handlers have been interrupted, so a
 * request still arriving (a client that sent half a body) or one whose handler was cut off would
 * hold the connection, and the process, forever. After a short grace they are cut.
 */
export const closableServer = () => {
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: KEEP_ALIVE_MS + 1000 })
  server.on("request", answerUnavailableUnlessServing(server))
  const close = server.close.bind(server)
  server.close = (callback) => {
    const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref()
    return close((error) => {
      clearTimeout(cut)
      callback?.(error)
    })
  }
  return server
}

/**
 * The socket is bound before the database starts (so a busy port leaves the data dir untouched),
 * and it accepts connections from then on: until the API's handler is attached, and again once
 * it is detached at shutdown, a request gets a 503 rather than hanging unanswered.
 */
const answerUnavailableUnlessServing = (server: Server) => (_request: IncomingMessage, response: ServerResponse) => {
  if (server.listenerCount("request") > 1) return
  response.writeHead(503, { "content-type": "application/json", "retry-after": "1", connection: "close" })
  response.end(JSON.stringify({ detail: "talkgraph is starting or stopping" }))
}

/** A Node HTTP server on HOST:PORT from the configuration; a failure to bind says why. */
export const ListenLive = Layer.unwrapEffect(
  Effect.map(
    AppConfig,
    (config) =>
      NodeHttpServer.layer(closableServer, { port: config.port, host: config.host, backlog: LISTEN_BACKLOG }).pipe(
        Layer.mapError((error) =>
          new ListenFailed({ message: describeListenFailure(error.cause, config.host, config.port) })
        )
      )
  )
)

/** The API served on the HttpServer below it (ListenLive, or a random loopback port in tests). */
export const ServeApiLive = HttpApiBuilder.serve(requestTelemetry).pipe(
  Layer.provide(DocsRoutes),
  Layer.provide(ApiLive),
  HttpServer.withLogAddress,
  HttpMiddleware.withTracerDisabledWhen(() => true)
)

/** The API as an HttpApp (handlers, docs, error shaping, request telemetry) for another application's router. */
export class ApiApp extends Context.Tag("talkgraph/ApiApp")<
  ApiApp,
  HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>
>() {}

/**
 * The API for an application embedding talkgraph, which serves it on its own HttpServer, e.g.
 * `HttpRouter.mountApp("/api", app, { includePrefix: true })` beside its own routes.
 */
export const ApiAppLive = Layer.effect(ApiApp, Effect.map(HttpApiBuilder.httpApp, requestTelemetry)).pipe(
  Layer.provide(DocsRoutes),
  Layer.provide(ApiLive),
  Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer])
)
