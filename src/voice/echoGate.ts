/**
 * Tells the agent's own voice coming back on the caller's line (a speakerphone, a carrier's line
 * echo) from the caller. Raising voice detection's threshold while the agent speaks does not do
 * this: Silero scores speech by its shape, not its loudness, and gives the agent's echo at -26 dB
 * the same probability as the caller (bench/turn-taking.ts, "echo_guard").
 *
 * It compares loudness envelopes, 20 ms at a time: the agent's audio as it will be heard and the
 * caller's line. When the line's envelope follows the agent's at some delay (correlation over the
 * last two seconds), there is an echo path, with a loss measured on the same frames; a caller frame
 * no louder than the agent's frame at that delay plus that loss (and a margin) is only echo. A
 * caller speaking over the agent is louder than the echo and passes. Without an echo path (most
 * calls) nothing is ever held back.
 *
 * The path needs ~400 ms of the agent's audio to be found: until the line has been judged once, the
 * caller's frames are held while the agent can be heard (at most MAX_HOLD_MS), then judged with the
 * path found and released. Otherwise the echo of the agent's first words in a call reaches voice
 * detection and speech-to-text and the agent interrupts itself (bench/turn-taking.ts, echo lines).
 * Once found (at a steady delay), a path is kept for the rest of the call (the replies that follow
 * start with too little of the agent's audio in the window to find it again), until one is found at
 * another delay.
 *
 * Pure and cheap (a few thousand additions per estimate): time is the caller's audio clock, in ms.
 */
export interface EchoGate {
  /** The agent's audio that will be heard from `atMs` on the call's audio clock. */
  readonly agent: (pcm: Int16Array, atMs: number) => void
  /**
   * The caller's frame starting at `atMs`; answers the frames released, in order, each judged: only
   * the agent's echo or not. Usually the frame itself; none while frames are held, all of them when
   * the hold ends.
   */
  readonly line: (pcm: Int16Array, atMs: number) => ReadonlyArray<JudgedFrame>
}

export interface JudgedFrame {
  readonly pcm: Int16Array
  readonly atMs: number
  readonly echo: boolean
}

interface EchoPath {
  readonly lag: number
  readonly lossDb: number
}

const FRAME_MS = 20
/** The longest echo delay looked for (network, the far end's buffer). */
const MAX_LAG_FRAMES = 40
/**
 * Audio is sent for play-out up to a few frames before it is due; a far end with an empty buffer
 * plays it (and echoes it) at once, before its time on the call's clock.
 */
const MIN_LAG_FRAMES = -15
/** Frames compared to find the echo path: two seconds. */
const WINDOW_FRAMES = 100
/**
 * Agent frames louder than this in the window are needed to judge an echo path (400 ms): fewer
 * find the path sooner but let two unrelated envelopes agree by chance (test/echoGate.test.ts).
 */
const MIN_ACTIVE_FRAMES = 20
const SILENCE_DB = -90
const AGENT_ACTIVE_DB = -50
/** The envelopes must agree this well for the line to count as carrying the agent's echo. */
const MIN_CORRELATION = 0.8
/**
 * An echo comes back quieter than the agent by at least this much (line echo is required to lose
 * 6 dB or more, ITU-T G.168; a speakerphone more): a line as loud as the agent is the caller, whose
 * syllables may follow the agent's envelope for a moment.
 */
const MIN_LOSS_DB = 6
/** A caller frame this much louder than the echo expected there is the caller. */
const MARGIN_DB = 6
/**
 * The longest the caller's frames are held while the first echo path is looked for: the agent's
 * first words in a call (a greeting that opens with a short "Hello," needs ~1 s to hold 400 ms of
 * voice). Speech the caller starts then reaches voice detection this much later, once a call.
 */
const MAX_HOLD_MS = 1500
/**
 * The path is estimated once every this many frames (100 ms), not at every frame: an echo's delay
 * does not change faster, and the estimate (every delay over the whole window) was a fifth of a
 * call's CPU when made every 20 ms (bench/voiceCalls.ts under --cpu-prof).
 */
const ESTIMATE_EVERY_FRAMES = 5
/**
 * A path is believed once found at the same delay (±1 frame) in this many estimates in a row: a
 * caller whose syllables happen to follow the agent's for a moment gives a delay that wanders.
 */
const STABLE_ESTIMATES = 3

export const levelDb = (pcm: Int16Array) => {
  let sum = 0
  for (const sample of pcm) sum += sample * sample
  const rms = Math.sqrt(sum / Math.max(1, pcm.length))
  return rms < 1 ? SILENCE_DB : Math.max(SILENCE_DB, 20 * Math.log10(rms / 32768))
}

export const echoGate = (): EchoGate => {
  /** Agent loudness by 20 ms frame index. */
  const agent = new Map<number, number>()
  /** Caller loudness, the last WINDOW_FRAMES + MAX_LAG_FRAMES frames, by index. */
  const line = new Map<number, number>()
  let newest = -1
  /** The last frame in which the agent was audible: without one in reach, there is nothing to compare. */
  let agentActiveAt = Number.NEGATIVE_INFINITY
  /** The line has been judged with enough of the agent's audio at least once: frames are not held any more. */
  let judgedOnce = false
  /** The echo path last found at the same delay long enough to be believed. */
  let trusted: EchoPath | null = null
  /** Consecutive estimates that found a path at about the same delay. */
  let run: { readonly lag: number; readonly estimates: number } | null = null
  let held: Array<{ readonly pcm: Int16Array; readonly atMs: number; readonly index: number; readonly level: number }> =
    []

  const agentAt = (index: number) => agent.get(index) ?? SILENCE_DB

  /**
   * The window read once per estimate: the line's frames (NaN where none arrived) and the agent's
   * at every delay looked for. Reading the maps at each delay instead was most of an estimate's cost.
   */
  const lineWindow = new Float64Array(WINDOW_FRAMES)
  const agentWindow = new Float64Array(WINDOW_FRAMES + MAX_LAG_FRAMES - MIN_LAG_FRAMES)

  /**
   * The delay (in frames) at which the line follows the agent, and the loss; null when no delay
   * fits, undefined when none fits yet but some delays could not be judged (too little of the
   * agent's audio in the window at that delay).
   */
  const echoPath = (now: number): EchoPath | null | undefined => {
    const first = now - WINDOW_FRAMES + 1
    // agentWindow[k] is the agent at frame first - MAX_LAG_FRAMES + k: line frame j at delay lag
    // meets agentWindow[j + MAX_LAG_FRAMES - lag].
    for (let k = 0; k < agentWindow.length; k++) agentWindow[k] = agentAt(first - MAX_LAG_FRAMES + k)
    // The line's sums do not depend on the delay: taken once, in the order every delay took them.
    let n = 0, sc = 0, scc = 0
    for (let j = 0; j < WINDOW_FRAMES; j++) {
      const c = line.get(first + j)
      lineWindow[j] = c ?? Number.NaN
      if (c === undefined) continue
      n++
      sc += c
      scc += c * c
    }
    const varC = scc - (sc * sc) / n
    let best: { lag: number; correlation: number } | null = null
    let judged = 0
    for (let lag = MIN_LAG_FRAMES; lag <= MAX_LAG_FRAMES; lag++) {
      const shift = MAX_LAG_FRAMES - lag
      let sa = 0, saa = 0, sac = 0, active = 0
      for (let j = 0; j < WINDOW_FRAMES; j++) {
        const c = lineWindow[j]!
        if (c !== c) continue
        const a = agentWindow[j + shift]!
        if (a > AGENT_ACTIVE_DB) active++
        sa += a
        saa += a * a
        sac += a * c
      }
      if (active < MIN_ACTIVE_FRAMES) continue
      judged++
      const varA = saa - (sa * sa) / n
      if (varA <= 0 || varC <= 0) continue
      const correlation = (sac - (sa * sc) / n) / Math.sqrt(varA * varC)
      if (best === null || correlation > best.correlation) best = { lag, correlation }
    }
    const noFit = judged === MAX_LAG_FRAMES - MIN_LAG_FRAMES + 1 ? null : undefined
    if (best === null || best.correlation < MIN_CORRELATION) return noFit
    const losses: Array<number> = []
    const shift = MAX_LAG_FRAMES - best.lag
    for (let j = 0; j < WINDOW_FRAMES; j++) {
      const c = lineWindow[j]!
      const a = agentWindow[j + shift]!
      if (c === c && a > AGENT_ACTIVE_DB) losses.push(c - a)
    }
    losses.sort((x, y) => x - y)
    const lossDb = losses[Math.floor(losses.length / 2)]!
    return lossDb <= -MIN_LOSS_DB ? { lag: best.lag, lossDb } : noFit
  }

  /** A line frame no louder than the agent's audio at the path's delay, less the loss, is only echo. */
  const isEcho = (index: number, level: number, path: EchoPath) => {
    const expected = agentAt(index - path.lag)
    return expected > AGENT_ACTIVE_DB && level <= expected + path.lossDb + MARGIN_DB
  }

  return {
    agent: (pcm, atMs) => {
      const index = Math.floor(atMs / FRAME_MS)
      const level = levelDb(pcm)
      agent.set(index, level)
      if (level > AGENT_ACTIVE_DB) agentActiveAt = Math.max(agentActiveAt, index)
      for (const key of agent.keys()) {
        if (key < newest - WINDOW_FRAMES - MAX_LAG_FRAMES) agent.delete(key)
        else break
      }
    },
    line: (pcm, atMs) => {
      const index = Math.floor(atMs / FRAME_MS)
      const level = levelDb(pcm)
      line.set(index, level)
      newest = Math.max(newest, index)
      for (const key of line.keys()) {
        if (key <= newest - WINDOW_FRAMES) line.delete(key)
        else break
      }
      held.push({ pcm, atMs, index, level })
      const inReach = index - agentActiveAt <= MAX_LAG_FRAMES
      const found = inReach && index % ESTIMATE_EVERY_FRAMES === 0 ? echoPath(index) : undefined
      if (found === null) {
        // Not a reason to forget a path found before: the window may hold the caller speaking
        // while the agent was silent, which no delay fits.
        judgedOnce = true
        run = null
      } else if (found !== undefined) {
        run = run !== null && Math.abs(found.lag - run.lag) <= 1
          ? { lag: run.lag, estimates: run.estimates + 1 }
          : { lag: found.lag, estimates: 1 }
        if (run.estimates >= STABLE_ESTIMATES) {
          judgedOnce = true
          trusted = found
        }
      }
      if (inReach && !judgedOnce && (held.length - 1) * FRAME_MS < MAX_HOLD_MS) return []
      const path = inReach ? trusted : null
      const released = held.map((frame): JudgedFrame => ({
        pcm: frame.pcm,
        atMs: frame.atMs,
        echo: path !== null && isEcho(frame.index, frame.level, path)
      }))
      held = []
      return released
    }
  }
}
