import type { EdgeData, NodeType } from "./definition.ts"

// The nodes and edges of a definition as validation reads them: envelopes decoded, data decoded once valid.

export interface NodeEntry {
  readonly index: number
  readonly id: string
  readonly type: NodeType
  readonly rawData: Record<string, unknown>
  data: unknown
}

export interface EdgeEntry {
  readonly index: number
  readonly id: string
  readonly source: string
  readonly target: string
  data: EdgeData | null
}
