import { describe, expect, it } from "vitest"
import { makeSecretBox } from "../layers/secrets/secretBox.ts"
import { acceptsMediaType } from "../src/storage/csvMediaTypes.ts"
import { ownerOfKey } from "../src/storage/keyOwner.ts"
import { quotaRefusal, remainingBytes } from "../src/storage/storageQuota.ts"
import { artifactLinkCheck, artifactLinkMessage, artifactPath } from "../src/usage/artifactLinks.ts"

describe("whose a stored object is", () => {
  it.each<[string, number | undefined]>([
    ["organizations/7/contacts/abc.csv", 7],
    ["organizations/12/recordings/uploads/x.wav", 12],
    ["calls/3/41/recording.wav", 3],
    ["calls/x/41/recording.wav", undefined],
    ["other/3/file", undefined],
    ["organizations/7", undefined]
  ])("%s → %s", (key, owner) => {
    expect(ownerOfKey(key)).toBe(owner)
  })
})

describe("the storage quota", () => {
  it("admits what fits, refuses what passes it or anything once it is full, and nothing with quota 0", () => {
    expect(quotaRefusal({ quotaBytes: 1000, usedBytes: 600 }, 400)).toBeUndefined()
    expect(quotaRefusal({ quotaBytes: 1000, usedBytes: 600 }, 401)).toMatch(/quota is 1000 bytes and 600 are in use/)
    expect(quotaRefusal({ quotaBytes: 1000, usedBytes: 1000 }, 0)).toBeDefined()
    expect(quotaRefusal({ quotaBytes: 1000, usedBytes: 1200 }, 0)).toBeDefined()
    expect(quotaRefusal({ quotaBytes: 0, usedBytes: 10 ** 12 }, 10 ** 12)).toBeUndefined()
    expect(remainingBytes({ quotaBytes: 1000, usedBytes: 1200 })).toBe(0)
  })
})

describe("media types an upload URL takes", () => {
  it("takes any type a .csv arrives as on a CSV URL, and only its own type on a clip's", () => {
    expect(acceptsMediaType("text/csv", "application/vnd.ms-excel")).toBe(true)
    expect(acceptsMediaType("application/vnd.ms-excel", "text/csv")).toBe(true)
    expect(acceptsMediaType("text/csv", "application/octet-stream")).toBe(true)
    expect(acceptsMediaType("text/csv", "application/json")).toBe(false)
    expect(acceptsMediaType("audio/wav", "audio/wav")).toBe(true)
    expect(acceptsMediaType("audio/wav", "application/octet-stream")).toBe(false)
  })
})

describe("artifact links", () => {
  const box = makeSecretBox("k".repeat(40))
  const link = (runId: string, kind: string, expires: number) => ({
    runId,
    kind,
    expires: String(expires),
    sig: box.sign("artifact", artifactLinkMessage(artifactPath(runId, kind), expires))
  })

  it("are valid until their expiry, then expired", () => {
    expect(artifactLinkCheck(box.verify, link("12", "recording", 1000), 1000)).toBe("valid")
    expect(artifactLinkCheck(box.verify, link("12", "recording", 1000), 1001)).toBe("expired")
  })

  it("are invalid once any part is changed or missing, expiry checked only after the signature", () => {
    const good = link("12", "recording", 1000)
    expect(artifactLinkCheck(box.verify, { ...good, runId: "13" }, 0)).toBe("invalid")
    expect(artifactLinkCheck(box.verify, { ...good, runId: "012" }, 0)).toBe("invalid")
    expect(artifactLinkCheck(box.verify, { ...good, kind: "transcript" }, 0)).toBe("invalid")
    expect(artifactLinkCheck(box.verify, { ...good, expires: "1001" }, 0)).toBe("invalid")
    expect(artifactLinkCheck(box.verify, { ...good, expires: "1e3" }, 0)).toBe("invalid")
    expect(artifactLinkCheck(box.verify, { ...good, sig: undefined }, 0)).toBe("invalid")
    expect(artifactLinkCheck(box.verify, { ...good, sig: "" }, 0)).toBe("invalid")
    expect(artifactLinkCheck(box.verify, { ...link("12", "recording", 5), sig: good.sig }, 10)).toBe("invalid")
  })
})
