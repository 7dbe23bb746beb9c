import { Layer } from "effect"
import { StorageLive } from "../storage/mod.ts"
import { RecordingsLive } from "./recordings.ts"

export { RecordingCatalogLive } from "./recordingCatalog.ts"

/** The recordings library on the configured storage (the same StorageLive the campaigns use). */
export const RecordingsAreaLive = RecordingsLive.pipe(Layer.provide(StorageLive))
