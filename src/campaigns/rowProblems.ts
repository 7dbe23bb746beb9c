import { RowList } from "./rowList.ts"

/** Distinct kinds of row problem described one by one; rows of any further kind are only counted. */
const PROBLEM_KINDS_SHOWN = 10

/** Per-row problems, each kind listed once with its rows. */
export class RowProblems {
  private readonly kinds = new Map<string, RowList>()
  private readonly others = new RowList()

  add(kind: string, row: number) {
    let rows = this.kinds.get(kind)
    if (!rows) {
      if (this.kinds.size >= PROBLEM_KINDS_SHOWN) return this.others.add(row)
      rows = new RowList()
      this.kinds.set(kind, rows)
    }
    rows.add(row)
  }

  get any() {
    return this.kinds.size > 0
  }

  describe(format: (kind: string, rows: RowList) => string) {
    const described = [...this.kinds].map(([kind, rows]) => format(kind, rows))
    return this.others.count > 0 ? [...described, format("other problems of the same kinds", this.others)] : described
  }
}
