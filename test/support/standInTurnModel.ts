/**
 * A stand-in for smart-turn v3 (whose weights cannot be fetched here): a hand-encoded ONNX model
 * (opset 13) with its input and output, `input_features` float [1, 80, frames] → [1, 1]. It reads
 * the mean of the last 25 frames (250 ms) over the quietest value of the whole window: speech at
 * the end lifts it and reads "incomplete", a trailing silence (the floor) reads "complete".
 * Only the protobuf messages an ONNX model needs are encoded (onnx.proto3 field numbers).
 */
const TAIL_FRAMES = 25

const varint = (value: number | bigint): Array<number> => {
  let rest = BigInt(value)
  if (rest < 0n) rest += 1n << 64n
  const bytes: Array<number> = []
  do {
    const low = Number(rest & 0x7fn)
    rest >>= 7n
    bytes.push(rest > 0n ? low | 0x80 : low)
  } while (rest > 0n)
  return bytes
}

type Field = Array<number>
const tag = (field: number, wire: number) => varint((field << 3) | wire)
const int = (field: number, value: number | bigint): Field => [...tag(field, 0), ...varint(value)]
const bytes = (
  field: number,
  data: ArrayLike<number>
): Field => [...tag(field, 2), ...varint(data.length), ...Array.from(data)]
const text = (field: number, value: string) => bytes(field, new TextEncoder().encode(value))
const message = (field: number, ...fields: Array<Field>) => bytes(field, fields.flat())

const FLOAT = 1
const INT64 = 7
const ATTRIBUTE_INTS = 7

/** ValueInfoProto: a float tensor with fixed dimensions. */
const floatValue = (field: number, name: string, dims: ReadonlyArray<number>) =>
  message(
    field,
    text(1, name),
    message(2, message(1, int(1, FLOAT), message(2, ...dims.map((dim) => message(1, int(1, dim))))))
  )

const floatInitializer = (name: string, value: number) => {
  const raw = new Uint8Array(new Float32Array([value]).buffer)
  return message(5, text(8, name), int(2, FLOAT), bytes(9, raw))
}

const int64Initializer = (name: string, values: ReadonlyArray<number>) => {
  const raw = new Uint8Array(new BigInt64Array(values.map(BigInt)).buffer)
  return message(5, int(1, values.length), text(8, name), int(2, INT64), bytes(9, raw))
}

const node = (op: string, inputs: ReadonlyArray<string>, output: string, axes?: ReadonlyArray<number>) =>
  message(
    1,
    ...inputs.map((input) => text(1, input)),
    text(2, output),
    text(3, output),
    text(4, op),
    ...(axes === undefined
      ? []
      : [
        message(5, text(1, "axes"), int(20, ATTRIBUTE_INTS), ...axes.map((axis) => int(8, axis))),
        message(5, text(1, "keepdims"), int(20, 2), int(3, 1))
      ])
  )

export interface StandInOptions {
  /** The frames the model's input holds (smart-turn: 800). */
  readonly frames?: number
  readonly inputName?: string
}

/** The model file's bytes. */
export const standInTurnModel = (options: StandInOptions = {}): Uint8Array => {
  const frames = options.frames ?? 800
  const input = options.inputName ?? "input_features"
  const graph = [
    node("Slice", [input, "tail_start", "tail_end", "time_axis"], "tail"),
    node("ReduceMean", ["tail"], "tail_mean", [1, 2]),
    node("ReduceMin", [input], "floor", [1, 2]),
    node("Sub", ["tail_mean", "floor"], "lift"),
    node("Reshape", ["lift", "one_by_one"], "lift_2d"),
    // 0 over the floor → sigmoid(5) ≈ 0.99 complete; 0.5 over it (speech) → sigmoid(-5) ≈ 0.01.
    node("Mul", ["lift_2d", "steepness"], "scaled"),
    node("Add", ["scaled", "bias"], "logit"),
    node("Sigmoid", ["logit"], "probability"),
    text(2, "stand_in_smart_turn"),
    int64Initializer("tail_start", [frames - TAIL_FRAMES]),
    int64Initializer("tail_end", [frames]),
    int64Initializer("time_axis", [2]),
    int64Initializer("one_by_one", [1, 1]),
    floatInitializer("steepness", -20),
    floatInitializer("bias", 5),
    floatValue(11, input, [1, 80, frames]),
    floatValue(12, "probability", [1, 1])
  ]
  return Uint8Array.from([
    ...int(1, 7),
    ...text(2, "talkgraph-test"),
    ...message(7, ...graph),
    ...message(8, text(1, ""), int(2, 13))
  ])
}
