/** The path alone: a query string can carry a credential (a media stream's token, a signed upload). */
export const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}
