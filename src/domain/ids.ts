import { Schema } from "effect"

/** An integer id with a brand; the OpenAPI document describes it as the integer it is on the wire. */
const branded = <const B extends string>(brand: B) =>
  Schema.Int.pipe(Schema.brand(brand), Schema.annotations({ identifier: "Int" }))

/**
 * The ids of the resources, branded so that one cannot be passed where another is expected (a run
 * id for a campaign id compiles to nothing at run time, but not at all in the type checker). On the
 * wire and in the database they are plain integers.
 */
export const OrganizationId = branded("OrganizationId")
export type OrganizationId = typeof OrganizationId.Type

export const CampaignId = branded("CampaignId")
export type CampaignId = typeof CampaignId.Type

export const RunId = branded("RunId")
export type RunId = typeof RunId.Type

export const WorkflowId = branded("WorkflowId")
export type WorkflowId = typeof WorkflowId.Type

export const TelephonyConfigId = branded("TelephonyConfigId")
export type TelephonyConfigId = typeof TelephonyConfigId.Type

export const RecordingId = branded("RecordingId")
export type RecordingId = typeof RecordingId.Type
