import { type Options, Parser } from "csv-parse"

export interface NumberedRecord {
  readonly record: Array<string>
  /** The line the record ends on, as csv-parse counts them (the header is line 1). */
  readonly line: number
}

/**
 * csv-parse handing over the records of each chunk of input together, each tagged with its line.
 * Its own `info` option copies the whole info object twice per record (a sixth of the parsing
 * time) for the one field read here, and a stream read per record costs a promise each. The
 * parser pushes each record the moment it ends, so its live `info.lines` is that record's line.
 */
export class NumberingCsvParser extends Parser {
  private pending: Array<NumberedRecord> = []

  constructor(options: Options) {
    // csv-parse hands stream options to its Transform. Each array is a whole chunk of input, so
    // one waiting is plenty; more would only pile up rows in memory while the database is busy.
    super({ ...options, readableHighWaterMark: 1 } as Options)
  }

  override push(record: unknown, encoding?: BufferEncoding): boolean {
    if (record !== null) {
      this.pending.push({ record: record as Array<string>, line: this.info.lines })
      return true
    }
    this.handOver()
    return super.push(null, encoding)
  }

  override _transform(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void) {
    super._transform(chunk, encoding, (error?: Error | null) => {
      this.handOver()
      callback(error)
    })
  }

  override _flush(callback: (error?: Error | null) => void) {
    super._flush((error?: Error | null) => {
      this.handOver()
      callback(error)
    })
  }

  private handOver() {
    if (this.pending.length === 0) return
    super.push(this.pending)
    this.pending = []
  }
}
