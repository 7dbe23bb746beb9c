/**
 * Event-stream parsing: the chat client's own `EventStreamDecoder` against `Sse.makeParser` from
 * @effect/experimental, on what a streamed chat completion looks like (one small JSON event per
 * token, arriving in network pieces of a few events, some split mid-line). Figures: events per
 * second for each, best of several rounds, same input, same bound per event.
 *
 *   npx tsx bench/eventStreamParse.ts
 */
import { Sse } from "@effect/experimental"
import { EventStreamDecoder } from "../layers/llm/eventStreamDecoder.ts"

const EVENTS = 200_000
const ROUNDS = 7
const EVENT_LIMIT = 1024 * 1024

const event = (i: number) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", choices: [{ index: 0, delta: { content: ` word${i}` } }] })}\n\n`
const text = Array.from({ length: EVENTS }, (_, i) => event(i)).join("") + "data: [DONE]\n\n"
/** Network pieces of about 1,400 bytes (one TCP segment), cut wherever they fall. */
const pieces: Array<string> = []
for (let at = 0; at < text.length; at += 1400) pieces.push(text.slice(at, at + 1400))

const ours = () => {
  const decoder = new EventStreamDecoder(EVENT_LIMIT)
  let count = 0
  for (const piece of pieces) count += decoder.push(piece).length
  return count + decoder.end().length
}

const effects = () => {
  let count = 0
  const parser = Sse.makeParser(() => count++, { maxEventSize: EVENT_LIMIT })
  for (const piece of pieces) parser.feed(piece)
  return count
}

const measure = (name: string, run: () => number) => {
  let best = Number.POSITIVE_INFINITY
  let count = 0
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now()
    count = run()
    best = Math.min(best, performance.now() - started)
  }
  console.log(
    `${name}: ${count} events in ${best.toFixed(1)} ms, ${
      Math.round(count / best * 1000).toLocaleString("en")
    } events/s`
  )
}

measure("EventStreamDecoder", ours)
measure("Sse.makeParser", effects)
measure("EventStreamDecoder", ours)
measure("Sse.makeParser", effects)
