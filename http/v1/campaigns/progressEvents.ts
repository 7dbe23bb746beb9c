import { HttpServerResponse } from "@effect/platform"
import { Schema, Stream } from "effect"
import type { CampaignProgress } from "../../../services/Campaigns.ts"
import { CampaignProgressResponse } from "./api.ts"

/** Proxies and load balancers close a connection that stays quiet for long; a comment keeps it open. */
const HEARTBEAT = "15 seconds"

const encoder = new TextEncoder()
const encodeProgress = Schema.encodeSync(CampaignProgressResponse)

const progressFrame = (progress: CampaignProgress) =>
  encoder.encode(`event: progress\ndata: ${JSON.stringify(encodeProgress(progress))}\n\n`)

const heartbeatFrame = encoder.encode(": heartbeat\n\n")

/** A campaign's progress as server-sent events, with heartbeats, ending when the progress does. */
export const progressEventStream = (progress: Stream.Stream<CampaignProgress>) =>
  HttpServerResponse.stream(
    Stream.merge(
      Stream.map(progress, progressFrame),
      Stream.tick(HEARTBEAT).pipe(Stream.drop(1), Stream.as(heartbeatFrame)),
      { haltStrategy: "left" }
    ),
    { contentType: "text/event-stream", headers: { "cache-control": "no-cache", "x-accel-buffering": "no" } }
  )
