import { Schema } from "effect"
import { IntFromString, querySchema } from "../requestSchemas.ts"

export const V2Pagination = Schema.Struct({
  page: Schema.Int,
  page_size: Schema.Int,
  total_items: Schema.Int,
  total_pages: Schema.Int
}).annotations({ identifier: "V2_Pagination" })

export const Resource = <S extends Schema.Schema.Any>(data: S) => Schema.Struct({ data })

export const Collection = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({ data: Schema.Array(item), pagination: V2Pagination })

/** v2 paging: page ≥ 1 (default 1), page_size 1–100 (default 20). */
export const PageQuery = querySchema("Page", {
  page: Schema.optionalWith(IntFromString({ minimum: 1, description: "Page number (default 1)" }), {
    default: () => 1
  }),
  page_size: Schema.optionalWith(
    IntFromString({ minimum: 1, maximum: 100, description: "Items per page (default 20)" }),
    { default: () => 20 }
  )
})

export const pagination = (page: number, pageSize: number, totalItems: number) => ({
  page,
  page_size: pageSize,
  total_items: totalItems,
  total_pages: Math.ceil(totalItems / pageSize)
})
