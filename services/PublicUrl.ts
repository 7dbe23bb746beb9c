import { Context } from "effect"

/**
 * Where clients and carriers reach this process (no trailing slash): the base of every upload,
 * callback, answer and media-stream URL talkgraph hands out, and of the URL a carrier signed.
 */
export class PublicUrl extends Context.Tag("talkgraph/PublicUrl")<PublicUrl, string>() {}
