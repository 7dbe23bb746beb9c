import * as crypto from "node:crypto"

/**
 * Upload keys live under their organization's prefix, so a key names its owner and a campaign can
 * be refused a key of another organization without any lookup (DOGRAH-NOTES §15.12).
 */
const KEY = /^organizations\/(\d+)\/contacts\/[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/

export const organizationOfKey = (key: string): number | undefined => {
  const match = KEY.exec(key)
  return match ? Number(match[1]) : undefined
}

export const belongsTo = (key: string, organizationId: number) => organizationOfKey(key) === organizationId

/** A fresh key; the client's file name is kept (sanitised) to make keys recognisable. */
export const newUploadKey = (organizationId: number, fileName?: string) => {
  const stem = (fileName ?? "")
    .replace(/\.csv$/i, "")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 80)
  return `organizations/${organizationId}/contacts/${crypto.randomUUID()}${stem ? `_${stem}` : ""}.csv`
}

/** What a local upload URL's signature covers: changing any of it invalidates the URL. */
export const uploadSignatureMessage = (key: string, expires: number, maxBytes: number, contentType: string) =>
  `${key}\n${expires}\n${maxBytes}\n${contentType}`

/** `text/csv; charset=utf-8` and `text/csv` are the same media type. */
export const mediaTypeOf = (contentType: string) => contentType.split(";")[0]!.trim().toLowerCase()
