import { browserMediaProtocol } from "./browser.ts"
import type { MediaProtocol } from "./mediaProtocol.ts"
import { plivoMediaProtocol } from "./plivo.ts"
import { telnyxMediaProtocol } from "./telnyx.ts"
import { twilioMediaProtocol } from "./twilio.ts"
import { vonageMediaProtocol } from "./vonage.ts"

export type * from "./mediaProtocol.ts"

export type MediaProvider = "twilio" | "vonage" | "telnyx" | "plivo" | "browser"

export const MEDIA_PROVIDERS: ReadonlyArray<MediaProvider> = ["twilio", "vonage", "telnyx", "plivo", "browser"]

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
