import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Recordings } from "../../../services/Recordings.ts"
import { monoPcm16Wav } from "../../../src/audio/pcmWav.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

const read = requireScope("agents:read")
const write = requireScope("agents:write")

export const RecordingsHandlers = HttpApiBuilder.group(Api, "recordings", (handlers) =>
  Effect.gen(function*() {
    const recordings = yield* Recordings
    return handlers
      .handle("uploadUrls", ({ payload }) =>
        Effect.flatMap(write, (principal) =>
          recordings.uploadUrls(
            principal,
            payload.files.map((file) => ({
              fileName: file.filename,
              contentType: file.mime_type,
              fileSize: file.file_size
            }))
          )).pipe(Effect.map((items) => ({ items }))))
      .handle("register", ({ payload }) =>
        Effect.flatMap(write, (principal) =>
          recordings.register(principal, payload.recordings)).pipe(
            Effect.map((registered) => ({ recordings: registered }))
          ))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(read, (principal) =>
          recordings.list(principal, { workflowId: urlParams.workflow_id })).pipe(
            Effect.map((list) => ({ recordings: list, total: list.length }))
          ))
      .handle("audio", ({ path }) =>
        Effect.flatMap(read, (principal) =>
          recordings.playback(principal.organizationId, path.id, "pcm_16k")).pipe(
            Effect.map((pcm) =>
              monoPcm16Wav([new Int16Array(pcm.buffer, pcm.byteOffset, Math.floor(pcm.byteLength / 2))], 16000)
            )
          ))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(write, (principal) =>
          recordings.update(principal, path.id, payload)))
      .handle("remove", ({ path }) =>
        Effect.flatMap(write, (principal) =>
          recordings.remove(principal, path.id)).pipe(
            Effect.as({ success: true, message: `Recording ${path.id} deleted` })
          ))
  }))
