/** Why an attempt got no status, in words that say nothing about the receiver's network (ports, hosts). */
export const failureText = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "_tag" in error && error._tag === "TimeoutException") {
    return "the receiver did not answer in time"
  }
  const text = String((error as { cause?: unknown })?.cause ?? error)
  if (text.includes("ERR_OUTBOUND_BLOCKED") || text.includes("does not allow")) return "refused by the outbound policy"
  return "no answer from the receiver"
}
