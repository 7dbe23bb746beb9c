/** v1 usage paging (spec "List runs with usage"): page ≥ 1, limit 1–100. */
export const DEFAULT_PAGE = 1
export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 100

/** Rows to skip for a 1-based page. */
export const pageOffset = (page: number, limit: number): number => (page - 1) * limit

/** Pages needed for `totalCount` rows; an empty report has no pages. */
export const totalPages = (totalCount: number, limit: number): number => Math.ceil(totalCount / limit)
