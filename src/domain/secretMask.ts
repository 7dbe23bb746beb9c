/** How a stored key is shown after it is saved: enough to recognise it, never enough to use it. */
export const MASK_PREFIX = "****"

export const keyHint = (key: string): string => (key.length >= 12 ? key.slice(-4) : "")

export const maskedKey = (hint: string): string => `${MASK_PREFIX}${hint}`

/** A client that read the settings and sends them back unchanged sends the mask, meaning "keep it". */
export const isMaskedKey = (value: string): boolean => value.startsWith(MASK_PREFIX)
