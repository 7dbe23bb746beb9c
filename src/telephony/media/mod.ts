import { Schema } from "effect"
import { CarrierProvider } from "../providerConfig.ts"
import { browserMediaProtocol } from "./browser.ts"
import type { MediaProtocol } from "./mediaProtocol.ts"
import { plivoMediaProtocol } from "./plivo.ts"
import { telnyxMediaProtocol } from "./telnyx.ts"
import { twilioMediaProtocol } from "./twilio.ts"
import { vonageMediaProtocol } from "./vonage.ts"

export type * from "./mediaProtocol.ts"

/** Who may open a media stream: every carrier, and our own browser test call. */
export const MediaProvider = Schema.Literal(...CarrierProvider.literals, "browser")
export type MediaProvider = typeof MediaProvider.Type

export const MEDIA_PROVIDERS: ReadonlyArray<MediaProvider> = MediaProvider.literals

/** A fresh protocol for one media connection (protocols keep per-stream state). */
export const mediaProtocolFor = (provider: MediaProvider): MediaProtocol => {
  switch (provider) {
    case "twilio":
      return twilioMediaProtocol()
    case "vonage":
      return vonageMediaProtocol()
    case "telnyx":
      return telnyxMediaProtocol()
    case "plivo":
      return plivoMediaProtocol()
    case "browser":
      return browserMediaProtocol()
  }
}
