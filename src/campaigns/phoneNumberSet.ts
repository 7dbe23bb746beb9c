/**
 * The phone numbers already seen in a CSV, as their E.164 digits (at most 15, so a double holds
 * them exactly). A million of them in a Set<number> take ~36 MB of heap, each a boxed number the
 * garbage collector walks on every full collection; this open-addressing table in a Float64Array
 * takes at most 16 bytes a number, outside the collected heap.
 */
export class PhoneNumberSet {
  // 0 marks a free slot: E.164 digits start with a country code, never with 0.
  private slots = new Float64Array(1 << 12)
  private count = 0

  /** Adds the number; false if it was already in the set. */
  add(digits: number): boolean {
    if ((this.count + 1) * 2 > this.slots.length) this.grow()
    const added = place(this.slots, digits)
    if (added) this.count++
    return added
  }

  private grow() {
    const old = this.slots
    this.slots = new Float64Array(old.length * 2)
    for (const digits of old) if (digits !== 0) place(this.slots, digits)
  }
}

const TWO_TO_32 = 4294967296

/** Linear probing from a hash of both 32-bit halves; the table is never more than half full. */
const place = (slots: Float64Array, digits: number): boolean => {
  const mask = slots.length - 1
  const low = digits % TWO_TO_32
  const high = (digits - low) / TWO_TO_32
  let hash = Math.imul(low ^ Math.imul(high, 0x9e3779b1), 0x85ebca6b)
  hash ^= hash >>> 15
  for (let i = hash & mask;; i = (i + 1) & mask) {
    const slot = slots[i]!
    if (slot === digits) return false
    if (slot === 0) {
      slots[i] = digits
      return true
    }
  }
}
