export { QualityReviewsLive } from "./qualityReviews.ts"
export { qualityReviewColumn } from "./reviewColumns.ts"
