export { qualityReviewColumn } from "./reviewColumns.ts"
export { QualityReviewsLive } from "./qualityReviews.ts"
