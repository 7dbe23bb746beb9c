/**
 * The calculator tool: arithmetic on numbers, written out and evaluated here (never `eval`):
 * `+ - * / % ^`, parentheses, unary minus, and the functions below. An expression is at most 500
 * characters, so its evaluation is bounded.
 */
const FUNCTIONS: Readonly<Record<string, (...args: Array<number>) => number>> = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  round: (value, digits = 0) => {
    const factor = 10 ** digits
    return Math.round(value * factor) / factor
  },
  floor: Math.floor,
  ceil: Math.ceil,
  min: Math.min,
  max: Math.max,
  pow: Math.pow,
  log: Math.log10,
  ln: Math.log
}
const CONSTANTS: Readonly<Record<string, number>> = { pi: Math.PI, e: Math.E }

export const MAX_EXPRESSION_LENGTH = 500

type Token =
  | { readonly kind: "number"; readonly value: number }
  | { readonly kind: "name"; readonly value: string }
  | { readonly kind: "op"; readonly value: string }

const tokenize = (text: string): Array<Token> => {
  const tokens: Array<Token> = []
  const pattern = /\s*(?:(\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|([A-Za-z_]+)|(\*\*|[-+*/%^(),]))/y
  let position = 0
  while (position < text.length) {
    if (/^\s*$/.test(text.slice(position))) break
    pattern.lastIndex = position
    const match = pattern.exec(text)
    if (!match) throw new Error(`unexpected "${text.slice(position).trim()[0]}" at position ${position + 1}`)
    if (match[1] !== undefined) tokens.push({ kind: "number", value: Number(match[0].trim()) })
    else if (match[2] !== undefined) tokens.push({ kind: "name", value: match[2].toLowerCase() })
    else tokens.push({ kind: "op", value: match[3] === "**" ? "^" : match[3]! })
    position = pattern.lastIndex
  }
  return tokens
}

/** The value of `expression`, or why it has none. */
export const evaluate = (
  expression: string
): { readonly ok: true; readonly value: number } | { readonly ok: false; readonly error: string } => {
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    return { ok: false, error: `the expression is longer than ${MAX_EXPRESSION_LENGTH} characters` }
  }
  try {
    const tokens = tokenize(expression)
    let index = 0
    const peek = () => tokens[index]
    const isOp = (value: string) => peek()?.kind === "op" && peek()!.value === value
    const expect = (value: string) => {
      if (!isOp(value)) throw new Error(`expected "${value}"`)
      index++
    }
    // Precedence climbing: sum → product → unary → power (right-associative) → atom.
    const sum = (): number => {
      let value = product()
      while (isOp("+") || isOp("-")) {
        const op = tokens[index++]!.value
        const right = product()
        value = op === "+" ? value + right : value - right
      }
      return value
    }
    const product = (): number => {
      let value = unary()
      while (isOp("*") || isOp("/") || isOp("%")) {
        const op = tokens[index++]!.value
        const right = unary()
        if ((op === "/" || op === "%") && right === 0) throw new Error("division by zero")
        value = op === "*" ? value * right : op === "/" ? value / right : value % right
      }
      return value
    }
    const unary = (): number => {
      if (isOp("-")) {
        index++
        return -unary()
      }
      if (isOp("+")) {
        index++
        return unary()
      }
      return power()
    }
    const power = (): number => {
      const base = atom()
      if (isOp("^")) {
        index++
        return base ** unary()
      }
      return base
    }
    const atom = (): number => {
      const token = tokens[index++]
      if (!token) throw new Error("the expression ends too early")
      if (token.kind === "number") return token.value
      if (token.kind === "op") {
        if (token.value !== "(") throw new Error(`unexpected "${token.value}"`)
        const value = sum()
        expect(")")
        return value
      }
      const fn = Object.hasOwn(FUNCTIONS, token.value) ? FUNCTIONS[token.value] : undefined
      if (fn) {
        expect("(")
        const args: Array<number> = []
        if (!isOp(")")) {
          args.push(sum())
          while (isOp(",")) {
            index++
            args.push(sum())
          }
        }
        expect(")")
        return fn(...args)
      }
      if (Object.hasOwn(CONSTANTS, token.value)) return CONSTANTS[token.value]!
      throw new Error(`unknown name "${token.value}"`)
    }
    if (tokens.length === 0) return { ok: false, error: "the expression is empty" }
    const value = sum()
    if (index < tokens.length) throw new Error(`unexpected "${tokens[index]!.value}"`)
    if (!Number.isFinite(value)) return { ok: false, error: "the result is not a finite number" }
    return { ok: true, value }
  } catch (error) {
    return { ok: false, error: (error as Error).message }
  }
}

export const CALCULATOR_PARAMETERS = {
  type: "object",
  properties: {
    expression: {
      type: "string",
      description:
        "An arithmetic expression, e.g. (12.5 * 3) + 4 or round(100 / 7, 2). Operators + - * / % ^, parentheses, sqrt abs round floor ceil min max pow log ln, pi e."
    }
  },
  required: ["expression"],
  additionalProperties: false
} as const
