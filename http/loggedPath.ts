/**
 * A request's path as logs and traces may keep it: without the query string (a signed upload URL
 * or an artifact link's signature rides there) and with credentials carried in the path replaced
 * (a media stream's token is its last segment, since carriers drop query strings).
 */
const MEDIA_TOKEN = /^(\/api\/v1\/telephony\/[^/]+\/media\/[^/]+\/)[^/]+/

export const loggedPath = (url: string) => {
  const query = url.search(/[?#]/)
  const path = query === -1 ? url : url.slice(0, query)
  return path.replace(MEDIA_TOKEN, "$1[token]")
}
