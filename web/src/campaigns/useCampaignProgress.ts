import { useEffect, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { messageOf, problemOf } from "../api/problems.ts"
import { readEventStream } from "../editor/eventStream.ts"

export type CampaignProgress = Schemas["CampaignProgressResponse"]

const finalStates: ReadonlyArray<CampaignProgress["state"]> = ["completed", "cancelled", "failed"]

/** A dropped connection is retried after this long (the server sends the current progress at once). */
const RECONNECT_MS = 2_000

/**
 * The campaign's progress pushed by the server (one stream per page, however often it changes);
 * `problem` says why it is not arriving. The stream is read with fetch, which carries the session's
 * token (EventSource could not).
 */
export const useCampaignProgress = (campaignId: number) => {
  const [progress, setProgress] = useState<CampaignProgress>()
  const [problem, setProblem] = useState<string>()
  useEffect(() => {
    const abort = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    const connect = async () => {
      let ended = false
      try {
        const { data, response, error } = await api.GET("/api/v1/campaign/{campaign_id}/progress/stream", {
          params: { path: { campaign_id: campaignId } },
          parseAs: "stream",
          signal: abort.signal
        })
        if (!response.ok || !data) throw problemOf(response.status, error)
        setProblem(undefined)
        for await (const frame of readEventStream(data)) {
          if (frame.event !== "progress") continue
          const next = frame.data as CampaignProgress
          setProgress(next)
          ended = finalStates.includes(next.state)
        }
        if (ended) return
      } catch (error) {
        if (abort.signal.aborted) return
        setProblem(`Live progress is unavailable: ${messageOf(error)}`)
        if ((error as { status?: number }).status === 404) return
      }
      if (!abort.signal.aborted) timer = setTimeout(connect, RECONNECT_MS)
    }
    void connect()
    return () => {
      abort.abort()
      clearTimeout(timer)
    }
  }, [campaignId])
  return { progress, problem }
}
