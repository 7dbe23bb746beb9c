import { OrganizationId } from "../domain/ids.ts"

/**
 * Every object talkgraph stores lives under its organization's prefix: uploads and clips under
 * `organizations/{id}/`, a call's recording and transcript under `calls/{id}/{run}/`. The owner is
 * read from the key, so storage can account for each object without being told whose it is.
 */
const OWNED = /^(?:organizations|calls)\/(\d{1,15})\//

export const ownerOfKey = (key: string): OrganizationId | undefined => {
  const match = OWNED.exec(key)
  return match ? OrganizationId.make(Number(match[1])) : undefined
}
