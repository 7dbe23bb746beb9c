import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import { CampaignProgressFeed } from "../../../services/CampaignProgressFeed.ts"
import { Campaigns } from "../../../services/Campaigns.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"
import { progressEventStream } from "./progressEvents.ts"

const read = requireScope("campaigns:read")
const write = requireScope("campaigns:write")

export const CampaignsHandlers = HttpApiBuilder.group(Api, "campaigns", (handlers) =>
  Effect.gen(function*() {
    const campaigns = yield* Campaigns
    const feed = yield* CampaignProgressFeed
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(write, (principal) => campaigns.create(principal, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(read, (principal) => campaigns.list(principal, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(read, (principal) => campaigns.get(principal, path.campaign_id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(write, (principal) =>
          campaigns.update(principal, path.campaign_id, payload)))
      .handle("start", ({ path }) =>
        Effect.flatMap(write, (principal) => campaigns.start(principal, path.campaign_id)))
      .handle("pause", ({ path }) => Effect.flatMap(write, (principal) => campaigns.pause(principal, path.campaign_id)))
      .handle(
        "resume",
        ({ path }) => Effect.flatMap(write, (principal) => campaigns.resume(principal, path.campaign_id))
      )
      .handle(
        "cancel",
        ({ path }) => Effect.flatMap(write, (principal) => campaigns.cancel(principal, path.campaign_id))
      )
      .handle(
        "redial",
        ({ path, payload }) =>
          Effect.flatMap(write, (principal) => campaigns.redial(principal, path.campaign_id, payload))
      )
      .handle(
        "progress",
        ({ path }) => Effect.flatMap(read, (principal) => campaigns.progress(principal, path.campaign_id))
      )
      .handle("progressStream", ({ path }) =>
        Effect.flatMap(read, (principal) =>
          feed.follow(principal, path.campaign_id)).pipe(Effect.map(progressEventStream)))
      .handle(
        "runs",
        ({ path, urlParams }) =>
          Effect.flatMap(read, (principal) =>
            campaigns.runs(principal, path.campaign_id, urlParams))
      )
      .handle("report", ({ path }) =>
        Effect.flatMap(read, (principal) =>
          campaigns.report(principal, path.campaign_id)).pipe(
            Effect.map((report) =>
              HttpServerResponse.stream(Stream.encodeText(report.csv), {
                contentType: "text/csv; charset=utf-8",
                headers: { "content-disposition": `attachment; filename="${report.fileName}"` }
              })
            )
          ))
  }))
