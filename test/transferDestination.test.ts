import { describe, expect, it } from "vitest"
import { chosenDestination, resolvedDestination, transferParameters } from "../src/tools/transferCall.ts"
import { destinationProblems, transferEndpointOf } from "../src/tools/transferDestination.ts"

describe("transfer destinations", () => {
  it("are E.164 numbers or SIP URIs", () => {
    expect(transferEndpointOf("+14155550100")).toEqual({ kind: "number", number: "+14155550100" })
    expect(transferEndpointOf(" sip:desk@pbx.example.com:5060;transport=tls ")).toEqual({
      kind: "sip",
      uri: "sip:desk@pbx.example.com:5060;transport=tls"
    })
    for (const refused of ["14155550100", "+1415", "+0145678901", "+1415555010012345", "sip:nohost", "tel:+1415"]) {
      expect({ refused, endpoint: transferEndpointOf(refused) }).toEqual({ refused, endpoint: null })
    }
    // A template is checked once filled in.
    expect(destinationProblems({ destination: "{{owner_phone}}" })).toEqual([])
  })

  it("are chosen by name, filled from the context, or routed by the context's value", () => {
    const listed = {
      destinations: [{ name: "Sales", destination: "+14155550100" }, { name: "support", destination: "{{desk}}" }]
    }
    expect(transferParameters(listed)).toMatchObject({ properties: { destination: { enum: ["Sales", "support"] } } })
    expect(chosenDestination(listed, { destination: "sales" }, {})).toEqual({
      name: "Sales",
      endpoint: { kind: "number", number: "+14155550100" }
    })
    expect(chosenDestination(listed, { destination: "support" }, { desk: "sip:a@b.example" })).toMatchObject({
      endpoint: { kind: "sip", uri: "sip:a@b.example" }
    })
    expect(chosenDestination(listed, { destination: "support" }, { desk: "nobody" })).toHaveProperty("error")
    expect(chosenDestination(listed, { destination: "legal" }, {})).toEqual({
      error: "\"destination\" must be one of: Sales, support"
    })

    const routed = {
      destination_source: "context_mapping" as const,
      context_mapping: {
        rules: [{ context_path: "customer.region", routes: [{ context_value: "EU", destination: "+442071234567" }] }],
        fallback_destination: "+14155550100"
      }
    }
    expect(chosenDestination(routed, {}, { customer: { region: "eu" } })).toMatchObject({
      endpoint: { number: "+442071234567" }
    })
    expect(chosenDestination(routed, {}, { customer: { region: "US" } })).toMatchObject({
      endpoint: { number: "+14155550100" }
    })
    expect(transferParameters(routed)).toEqual({ type: "object", properties: {}, additionalProperties: false })
  })

  it("come from a resolver's transfer_context.destination, which must be an endpoint; its parameters are the model's", () => {
    expect(resolvedDestination({ transfer_context: { destination: " +14155550100 ", custom_message: "Hi" } })).toEqual({
      name: "+14155550100",
      endpoint: { kind: "number", number: "+14155550100" }
    })
    expect(resolvedDestination({ transfer_context: { destination: "sip:desk@pbx.example.com" } })).toMatchObject({
      endpoint: { kind: "sip", uri: "sip:desk@pbx.example.com" }
    })
    for (const answer of [null, "text", { destination: "+14155550100" }, { transfer_context: { destination: 5 } }]) {
      expect(resolvedDestination(answer)).toEqual({
        error: "the transfer resolver answered no transfer_context.destination"
      })
    }
    expect(resolvedDestination({ transfer_context: { destination: "front desk" } })).toMatchObject({
      error: expect.stringContaining("must be an E.164 number")
    })
    const config = {
      destination_source: "dynamic" as const,
      resolver: {
        url: "https://resolver.example.com",
        parameters: [
          { name: "department", type: "string" as const, description: "Which department" },
          { name: "vip", type: "boolean" as const, description: "A VIP caller", required: false }
        ]
      }
    }
    expect(transferParameters(config)).toEqual({
      type: "object",
      properties: {
        department: { type: "string", description: "Which department" },
        vip: { type: "boolean", description: "A VIP caller" }
      },
      required: ["department"],
      additionalProperties: false
    })
  })
})
