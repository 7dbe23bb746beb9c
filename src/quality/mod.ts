export * from "./qualityReview.ts"
export * from "./reviewPrompt.ts"
