/**
 * The per-organization storage quota (STORAGE_QUOTA_BYTES; 0 means none). Uploads that would take
 * the organization past it are refused; what the server writes itself (call recordings, converted
 * clips) is kept and counted, since losing a call's recording would be worse than passing the quota.
 */
export interface QuotaUse {
  readonly quotaBytes: number
  readonly usedBytes: number
}

/** Bytes still free, or Infinity when there is no quota. */
export const remainingBytes = ({ quotaBytes, usedBytes }: QuotaUse) =>
  quotaBytes === 0 ? Number.POSITIVE_INFINITY : Math.max(0, quotaBytes - usedBytes)

export const quotaExceeded = (use: QuotaUse) =>
  `This organization's storage quota is ${use.quotaBytes} bytes and ${use.usedBytes} are in use; ` +
  "delete recordings or ask the operator to raise STORAGE_QUOTA_BYTES"

/** Why adding `bytes` is refused, or undefined when it fits (nothing fits a full quota). */
export const quotaRefusal = (use: QuotaUse, bytes: number): string | undefined => {
  const room = remainingBytes(use)
  return bytes <= room && room > 0 ? undefined : quotaExceeded(use)
}
