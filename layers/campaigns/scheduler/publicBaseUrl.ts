import { Context, Layer } from "effect"
import { publicUrl } from "../../../http/publicUrl.ts"

/** Where carriers reach this service: the base of every answer, status and media URL we hand them. */
export class PublicBaseUrl extends Context.Tag("talkgraph/PublicBaseUrl")<PublicBaseUrl, string>() {}

export const PublicBaseUrlLive = Layer.effect(PublicBaseUrl, publicUrl)
