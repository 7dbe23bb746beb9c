export * from "./qualityReview.ts"
export * from "./reviewPrompt.ts"
export * from "./reviewView.ts"
export * from "./reviewWindow.ts"
