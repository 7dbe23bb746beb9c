import { Schema } from "effect"
import { Timestamp } from "../domain/wireTypes.ts"
import { TOOL_NAME_MAX_LENGTH, toolNameFor } from "../graph/toolName.ts"
import { ToolDefinition, ToolStatus, ToolType } from "./toolDefinition.ts"

/** A tool of the library as shown (Dograh's `ToolResponse`); a credential is named by its uuid, never shown. */
export const Tool = Schema.Struct({
  id: Schema.Int,
  tool_uuid: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  category: ToolType,
  icon: Schema.NullOr(Schema.String),
  icon_color: Schema.NullOr(Schema.String),
  status: ToolStatus,
  /** The function name the model calls it by, derived from `name`. */
  function_name: Schema.String,
  definition: ToolDefinition,
  created_at: Timestamp,
  updated_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "ToolResponse" })
export type Tool = typeof Tool.Type

/** The function name a library tool is offered under: its name by the edges' rule, bounded to what providers accept. */
export const functionNameOf = (name: string): string =>
  toolNameFor(name).replace(/^_+|_+$/g, "").slice(0, TOOL_NAME_MAX_LENGTH) || "tool"
