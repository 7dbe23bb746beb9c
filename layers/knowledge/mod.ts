export { DocumentCatalogLive } from "./documentCatalog.ts"
export { KnowledgeBaseLive } from "./knowledgeBase.ts"
