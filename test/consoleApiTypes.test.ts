import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { apiTypesFile, generateApiTypes } from "../web/tooling/apiTypes.ts"

describe("the console's API types", () => {
  it("are the ones the server's OpenAPI document gives today (regenerate with `npm run web:types`)", async () => {
    const checkedIn = fs.readFileSync(apiTypesFile, "utf8")
    const current = await generateApiTypes()
    expect(checkedIn === current, "web/src/api/schema.ts is stale: run `npm run web:types` and commit it").toBe(true)
  })
})
