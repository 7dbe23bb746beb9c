export { KnowledgeBaseLive } from "./knowledgeBase.ts"
