/**
 * Row (or column) numbers for a message: the first few, and how many more, so a problem on a
 * million rows still reads in one line ("Rows 3, 8, 12, 40, 41 and 995 more").
 */
export class RowList {
  private readonly first: Array<number> = []
  private total = 0
  private readonly shown: number
  private readonly noun: string

  constructor(shown = 5, noun = "Row") {
    this.shown = shown
    this.noun = noun
  }

  add(row: number) {
    if (this.first.length < this.shown) this.first.push(row)
    this.total++
  }

  /** `total` more rows, of which `rows` are the first few, in order (as a database statement reports them). */
  addSome(rows: ReadonlyArray<number>, total: number) {
    for (const row of rows) if (this.first.length < this.shown) this.first.push(row)
    this.total += total
  }

  get count() {
    return this.total
  }

  describe() {
    const label = this.total === 1 ? this.noun : `${this.noun}s`
    const more = this.total - this.first.length
    return `${label} ${this.first.join(", ")}${more > 0 ? ` and ${more} more` : ""}`
  }
}
