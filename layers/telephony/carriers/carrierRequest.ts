import { Effect } from "effect"
import { CarrierUnavailable } from "../../../services/Telephony.ts"

const REQUEST_TIMEOUT_MS = 10_000

export interface CarrierReply {
  readonly status: number
  readonly body: Record<string, any>
}

/** One REST call to a carrier; the body is read as JSON when there is one. Only our own message leaves on failure. */
export const carrierRequest = (provider: string, url: string, init: { method: string; headers: Record<string, string>; body?: string }) =>
  Effect.tryPromise({
    try: async (signal): Promise<CarrierReply> => {
      const response = await fetch(url, { ...init, signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]) })
      const text = await response.text()
      let body: Record<string, any> = {}
      try {
        body = text ? JSON.parse(text) : {}
      } catch {
        body = {}
      }
      return { status: response.status, body }
    },
    catch: (error) => new CarrierUnavailable({ message: `${provider} could not be reached: ${(error as Error).name}` })
  })

export const trimmedBase = (base: string | null, fallback: string) => (base ?? fallback).replace(/\/+$/, "")
