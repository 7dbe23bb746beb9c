import { HttpApi, HttpApiBuilder, HttpLayerRouter, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect, Scope } from "effect"

/**
 * `/openapi.json` and the Swagger UI at `/docs`, each built on its first request and then kept.
 * @effect/platform's own layers build both while the server starts: the document walks every
 * endpoint's schemas (~0.1 s of CPU) and the page carries Swagger UI, a 1.7 MB script held in
 * memory from then on, though a server answering calls and carriers may never be asked for either.
 */
export const DocsRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const { api } = yield* HttpApi.Api
    const scope = yield* Effect.scope
    const openApiDocument = yield* Effect.cached(
      Effect.suspend(() => HttpServerResponse.json(OpenApi.fromApi(api))).pipe(Effect.orDie)
    )
    // The page as @effect/platform renders it, served by a router of its own that lives as long as this one.
    const swaggerPage = yield* Effect.cached(
      Effect.promise(() => import("@effect/platform/HttpApiSwagger")).pipe(
        Effect.flatMap(({ layerHttpLayerRouter }) =>
          HttpLayerRouter.toHttpEffect(layerHttpLayerRouter({ api, path: "/docs" }))
        ),
        Scope.extend(scope)
      )
    )
    yield* router.get("/openapi.json", openApiDocument)
    yield* router.get("/docs", Effect.flatten(swaggerPage))
  })
)
