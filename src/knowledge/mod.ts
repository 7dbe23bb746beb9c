export * from "./chunking.ts"
export * from "./documentKinds.ts"
export * from "./knowledgeDocument.ts"
export * from "./rankFusion.ts"
