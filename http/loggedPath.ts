import { pathOf } from "./requestPath.ts"

/**
 * A request's path as logs and traces may keep it: without the query string (a signed upload URL
 * or an artifact link's signature rides there) and with credentials carried in the path replaced
 * (a media stream's token is its last segment, since carriers drop query strings).
 */
const MEDIA_TOKEN = /^(\/api\/v1\/telephony\/[^/]+\/media\/[^/]+\/)[^/]+/

export const loggedPath = (url: string) => pathOf(url).replace(MEDIA_TOKEN, "$1[token]")
