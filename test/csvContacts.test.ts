import { parse as parseCsv } from "csv-parse/sync"
import { describe, expect, it } from "vitest"
import {
  type Contact,
  contactsSummary,
  CsvContactsInvalid,
  type CsvContactsOptions,
  type CsvContactsSummary,
  readContacts
} from "../src/campaigns/csvContacts.ts"
import { RowList } from "../src/campaigns/rowList.ts"

interface Outcome {
  readonly contacts: Array<Contact>
  readonly summary?: CsvContactsSummary
  readonly problems?: ReadonlyArray<string>
}

/**
 * What the store keeps of the rows read: the reader yields every usable row, and the database's
 * unique index on (campaign_id, phone_number) skips a number already stored (first row kept;
 * test/campaigns.test.ts checks it end to end on both databases).
 */
const stored = (contacts: ReadonlyArray<Contact>) => {
  const seen = new Set<string>()
  const duplicate = new RowList()
  const kept = contacts.filter((contact) => {
    if (seen.has(contact.phone_number)) {
      duplicate.add(contact.row)
      return false
    }
    seen.add(contact.phone_number)
    return true
  })
  return { kept, duplicate }
}

/** Feeds the bytes in small chunks, as a network stream would, splitting multi-byte characters too. */
async function* chunked(bytes: Uint8Array, size = 7) {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
}

const read = async (
  input: string | Uint8Array,
  options: Partial<CsvContactsOptions> = {},
  chunkSize = 7
): Promise<Outcome> => {
  const bytes = typeof input === "string" ? new TextEncoder().encode(input) : input
  const contacts: Array<Contact> = []
  const generator = readContacts(chunked(bytes, chunkSize), {
    defaultRegion: undefined,
    requiredColumns: [],
    batchSize: 2,
    ...options
  })
  try {
    while (true) {
      const next = await generator.next()
      if (next.done) {
        const { duplicate, kept } = stored(contacts)
        return { contacts: kept, summary: contactsSummary(next.value, duplicate) }
      }
      contacts.push(...next.value)
    }
  } catch (error) {
    if (error instanceof CsvContactsInvalid) return { contacts, problems: error.problems }
    throw error
  }
}

const utf8 = (text: string) => new TextEncoder().encode(text)

describe("contacts CSV: refused files (422 with the reason)", () => {
  const cases: Array<
    { name: string; input: string | Uint8Array; options?: Partial<CsvContactsOptions>; problem: RegExp }
  > = [
    { name: "an empty file", input: "", problem: /file is empty/ },
    { name: "only blank lines", input: "\n\r\n\n", problem: /file is empty/ },
    { name: "a header without rows", input: "phone_number,name\n", problem: /header but no contact rows/ },
    {
      name: "no phone_number column",
      input: "phone,name\n+14155550123,Ann\n",
      problem: /no "phone_number" column \(found: phone, name\)/
    },
    {
      name: "a duplicated column",
      input: "phone_number,name,Name\n+14155550123,a,b\n",
      problem: /"Name" appears more than once/
    },
    {
      name: "an unnamed column",
      input: "phone_number,,name\n+14155550123,a,b\n",
      problem: /Column 2 of the header has no name/
    },
    {
      name: "a workflow variable with no column",
      input: "phone_number,name\n+14155550123,Ann\n",
      options: { requiredColumns: ["name", "account_id", "order"] },
      problem: /The workflow uses \{\{account_id\}\}, \{\{order\}\} but the CSV has no columns of that name/
    },
    {
      name: "rows with fewer fields than the header",
      input: "phone_number,name,plan\n+14155550123,Ann,gold\n+14155550124,Bo\n+14155550125,Cy,extra,more\n",
      problem: /^Row 3: fewer fields than the header's 3 columns$/
    },
    { name: "an unclosed quote", input: "phone_number,name\n+14155550123,\"Ann\n", problem: /malformed/ },
    {
      name: "Latin-1 text",
      input: Uint8Array.from([...utf8("phone_number,name\n+14155550123,Jos"), 0xe9, 0x0a]),
      problem: /not UTF-8 text/
    },
    { name: "UTF-16 text", input: Uint8Array.from([0xff, 0xfe, 0x70, 0x00, 0x68, 0x00]), problem: /UTF-16/ },
    {
      name: "a binary file",
      input: Uint8Array.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0x14, 0x00]),
      problem: /binary/
    },
    {
      name: "no usable number at all",
      input: "phone_number\nnot a number\n12\n",
      problem: /No row has a usable phone number \(2 rows read/
    },
    {
      name: "an unknown greeting override type",
      input: "phone_number,greeting_override_type,greeting_override_text\n+14155550123,video,Hi\n",
      problem: /Row 2: greeting_override_type must be "text" or "audio"/
    },
    {
      name: "a text override without text",
      input: "phone_number,greeting_override_type,greeting_override_text\n+14155550123,text,\n",
      problem: /Row 2: greeting_override_text is empty while greeting_override_type is "text"/
    },
    {
      name: "an audio override without a recording",
      input: "phone_number,greeting_override_type,greeting_override_recording_id\n+14155550123,audio,\n",
      problem: /greeting_override_recording_id is empty/
    },
    {
      name: "an override text referencing a missing column",
      input: "phone_number,name,greeting_override_type,greeting_override_text\n+14155550123,Ann,text,Hi {{nickname}}\n",
      problem: /references \{\{nickname\}\}, which is not a column/
    },
    {
      name: "override text without a type",
      input: "phone_number,greeting_override_type,greeting_override_text\n+14155550123,,Hello\n",
      problem: /greeting_override_type is empty while another greeting override column is filled/
    }
  ]
  for (const { name, input, options, problem } of cases) {
    it(`refuses ${name}`, async () => {
      const outcome = await read(input, options)
      expect(outcome.problems, JSON.stringify(outcome.problems)).toBeDefined()
      expect(outcome.problems!.join("\n")).toMatch(problem)
    })
  }

  it("lists the first five rows of a problem and counts the rest", async () => {
    const rows = Array.from({ length: 12 }, (_, i) => `+1415555${String(1000 + i)},x,video`).join("\n")
    const outcome = await read(`phone_number,name,greeting_override_type\n${rows}\n`)
    expect(outcome.problems).toEqual([
      "Rows 2, 3, 4, 5, 6 and 7 more: greeting_override_type must be \"text\" or \"audio\""
    ])
  })

  it("yields no contacts after a structural problem, so a caller stores nothing unusable", async () => {
    const good = Array.from({ length: 10 }, (_, i) => `+1415555${String(2000 + i)},ok`).join("\n")
    const outcome = await read(`phone_number,name\n+14155551000,a\n+14155551001\n${good}\n`)
    expect(outcome.problems).toBeDefined()
    expect(outcome.contacts.length).toBeLessThanOrEqual(2)
  })
})

describe("contacts CSV: accepted files", () => {
  it("normalises numbers to E.164, keeps other columns as context, numbers rows as a spreadsheet does", async () => {
    const outcome = await read("phone_number,first_name,plan\n+1 (415) 555-0123,Ann,gold\n\n+44 20 7946 0958,Bob,\n")
    expect(outcome.summary).toEqual({ accepted: 2, columns: ["phone_number", "first_name", "plan"], warnings: [] })
    expect(outcome.contacts).toEqual([
      { row: 2, phone_number: "+14155550123", context: { first_name: "Ann", plan: "gold" }, greeting_override: null },
      { row: 4, phone_number: "+442079460958", context: { first_name: "Bob", plan: "" }, greeting_override: null }
    ])
  })

  it("reads numbers without a country code in the default region", async () => {
    const outcome = await read("phone_number\n(415) 555-0123\n020 7946 0958\n", { defaultRegion: "US" })
    expect(outcome.contacts.map((c) => c.phone_number)).toEqual(["+14155550123"])
    expect(outcome.summary!.warnings).toEqual(["1 row skipped: invalid phone number (row 3)"])
  })

  it("yields a repeated number like any row, for the store to skip", async () => {
    const generator = readContacts(chunked(utf8("phone_number\n+14155550123\n+1 415 555 0123\n")), {
      defaultRegion: undefined,
      requiredColumns: []
    })
    const first = await generator.next()
    expect(first.done ? [] : first.value.map((contact) => contact.row)).toEqual([2, 3])
    const end = await generator.next()
    expect(end.done && end.value.read).toBe(2)
  })

  it("skips invalid, empty and duplicate numbers and summarises them in warnings", async () => {
    const outcome = await read(
      "phone_number,name\n+14155550123,a\nnope,b\n,c\n+1 415 555 0123,d\n+14155550124,e\n+14155550124,f\n"
    )
    expect(outcome.contacts.map((c) => c.context["name"])).toEqual(["a", "e"])
    expect(outcome.summary!.warnings).toEqual([
      "1 row skipped: empty phone number (row 4)",
      "1 row skipped: invalid phone number (without a default region, numbers must start with + and a country code) (row 3)",
      "2 rows skipped: duplicate phone number (rows 5, 7)"
    ])
  })

  it("strips a UTF-8 byte order mark and reads CRLF line endings", async () => {
    const outcome = await read(
      Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8("phone_number,name\r\n+14155550123,Ann\r\n")])
    )
    expect(outcome.summary!.columns).toEqual(["phone_number", "name"])
    expect(outcome.contacts).toEqual([{
      row: 2,
      phone_number: "+14155550123",
      context: { name: "Ann" },
      greeting_override: null
    }])
  })

  it("reads quoted fields with commas, quotes and line breaks", async () => {
    const outcome = await read(
      "phone_number,address,note\n+14155550123,\"1 Main St, Springfield\",\"She said \"\"hi\"\"\nthen left\"\n"
    )
    expect(outcome.contacts[0]!.context).toEqual({
      address: "1 Main St, Springfield",
      note: "She said \"hi\"\nthen left"
    })
  })

  it("reads large chunks the same, multi-byte characters and all, and places an encoding error by chunk", async () => {
    // One 100 kB chunk, as storage hands over; characters of 2, 3 and 4 bytes fall on every offset.
    const names = Array.from({ length: 3000 }, (_, i) => `${"x".repeat(i % 7)}Zoë 日本 🎉`)
    const text = `phone_number,name\n${
      names.map((name, i) => `+1415555${String(i).padStart(4, "0")},${name}`).join("\n")
    }\n`
    const bytes = utf8(text)
    expect(bytes.length).toBeGreaterThan(64 * 1024)
    expect((await read(bytes, {}, bytes.length)).contacts.map((contact) => contact.context["name"])).toEqual(names)
    const broken = Uint8Array.from(bytes)
    broken[70_000] = 0xff
    expect((await read(broken, {}, bytes.length)).problems).toEqual([
      "The file is not UTF-8 text (invalid byte sequence after byte 0); save the CSV as UTF-8"
    ])
  })

  it("keeps non-ASCII text split across chunks intact", async () => {
    const outcome = await read("phone_number,name\n+14155550123,Zoë Ødegård 日本\n")
    expect(outcome.contacts[0]!.context["name"]).toBe("Zoë Ødegård 日本")
  })

  it("accepts greeting overrides, case-insensitively, and keeps the Start greeting when they are empty", async () => {
    const outcome = await read(
      "Phone_Number,name,Greeting_Override_Type,greeting_override_text,greeting_override_recording_id\n" +
        "+14155550123,Ann,TEXT,\"Hi {{name}}, it is {{missing | there}}\",\n" +
        "+14155550124,Bob,audio,,rec_123\n" +
        "+14155550125,Cy,,,\n"
    )
    expect(outcome.contacts.map((c) => c.greeting_override)).toEqual([
      { type: "text", text: "Hi {{name}}, it is {{missing | there}}" },
      { type: "audio", recording_id: "rec_123" },
      null
    ])
    expect(outcome.contacts[0]!.context).toEqual({ name: "Ann" })
  })

  it("accepts workflow variables that every call provides without a column", async () => {
    const outcome = await read("phone_number,name\n+14155550123,Ann\n", {
      requiredColumns: ["name", "phone_number", "called_number"]
    })
    expect(outcome.summary!.accepted).toBe(1)
  })

  it("delivers contacts in batches of the requested size", async () => {
    const rows = Array.from({ length: 5 }, (_, i) => `+1415555${String(3000 + i)}`).join("\n")
    const batches: Array<number> = []
    const generator = readContacts(chunked(utf8(`phone_number\n${rows}\n`)), {
      defaultRegion: undefined,
      requiredColumns: [],
      batchSize: 2
    })
    for await (const batch of generator) batches.push(batch.length)
    expect(batches).toEqual([2, 2, 1])
  })
})

describe("contacts CSV: files from real spreadsheets", () => {
  it.each([
    ["semicolons (Excel where the decimal separator is a comma)", "phone_number;name;balance\n+14155550123;Ann;1,50\n"],
    ["tabs", "phone_number\tname\tbalance\n+14155550123\tAnn\t1,50\n"],
    ["Excel's sep= hint line", "sep=;\nphone_number;name;balance\n+14155550123;Ann;1,50\n"],
    [
      "a BOM and blank lines before a semicolon header",
      "\uFEFF\n;;\nphone_number;name;balance\n+14155550123;Ann;1,50\n"
    ],
    ["semicolons with a comma in a column name", "phone_number;name, first;balance\n+14155550123;Ann;1,50\n"]
  ])("reads fields separated by %s", async (_, text) => {
    for (const size of [1, 5, 1 << 20]) {
      const outcome = await read(text, {}, size)
      expect(outcome.problems).toBeUndefined()
      const context = outcome.contacts[0]!.context
      expect(outcome.contacts).toHaveLength(1)
      expect(outcome.contacts[0]!.phone_number).toBe("+14155550123")
      expect(Object.values(context)).toEqual(["Ann", "1,50"])
    }
  })

  it("numbers rows from the header after an Excel sep= line, as Excel shows them", async () => {
    const outcome = await read("sep=;\r\nphone_number;name\r\n+14155550123;Ann\r\n+14155550124;Bo\r\n")
    expect(outcome.contacts.map((contact) => contact.row)).toEqual([2, 3])
  })

  it("keeps a row with extra fields, ignores the extra fields and warns about that row", async () => {
    const outcome = await read("phone_number,name\n+14155550123,Ann,stray note\n+14155550124,Bo\n+14155550125,Cy,,\n")
    expect(outcome.contacts.map((contact) => contact.context)).toEqual([{ name: "Ann" }, { name: "Bo" }, {
      name: "Cy"
    }])
    expect(outcome.summary!.warnings).toEqual([
      "1 row has more fields than the header's 2 columns; the extra fields were ignored (row 2)"
    ])
  })

  it("keeps columns named like Object's own properties as data", async () => {
    const outcome = await read("phone_number,__proto__,constructor,toString,hasOwnProperty\n+14155550123,a,b,c,d\n")
    const context = outcome.contacts[0]!.context
    expect(Object.getPrototypeOf(context)).toBe(Object.prototype)
    expect(Object.entries(context)).toEqual([["__proto__", "a"], ["constructor", "b"], ["toString", "c"], [
      "hasOwnProperty",
      "d"
    ]])
    expect(JSON.parse(JSON.stringify(context), (_, value) => value)).toEqual(
      JSON.parse("{\"__proto__\":\"a\",\"constructor\":\"b\",\"toString\":\"c\",\"hasOwnProperty\":\"d\"}")
    )
    expect(JSON.stringify(context)).toBe(
      "{\"__proto__\":\"a\",\"constructor\":\"b\",\"toString\":\"c\",\"hasOwnProperty\":\"d\"}"
    )
  })

  it.each([
    [
      "a million named columns",
      () => `${Array.from({ length: 1_000_000 }, (_, i) => `c${i}`).join(",")},phone_number\n+14155550123\n`
    ],
    ["a million empty columns", () => `phone_number${",".repeat(999_999)}\n+14155550123\n`],
    ["a million unnamed columns, then a row", () => `${",".repeat(1_000_000)}\n+14155550123\n`],
    ["a row of a million fields", () => `phone_number,name\n+14155550123,Ann${",x".repeat(1_000_000)}\n`],
    ["a field of ten million characters", () => `phone_number,name\n+14155550123,"${"x".repeat(10_000_000)}"\n`]
  ])("refuses %s with one short message", async (_, text) => {
    const before = process.memoryUsage().heapUsed
    const outcome = await read(text(), {}, 64 * 1024)
    expect(outcome.problems).toHaveLength(1)
    expect(outcome.problems![0]!.length).toBeLessThan(200)
    expect(outcome.problems![0]).toMatch(
      /columns; a contacts CSV may have at most 1,000|longer than 1,048,576 characters|no "phone_number" column/
    )
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(200 * 1024 * 1024)
  })

  it("keeps messages short whatever the header and rows hold", async () => {
    const long = "n".repeat(100_000)
    const header = await read(
      `${long},${long},${Array.from({ length: 900 }, () => "").join(",")}\n+14155550123\n`,
      {},
      64 * 1024
    )
    expect(header.problems!.join("\n").length).toBeLessThan(400)
    const rows = Array.from({ length: 50 }, (_, i) => `+1415555${1000 + i},text,Hi {{missing_${i}_${long}}}`).join("\n")
    const overrides = await read(`phone_number,greeting_override_type,greeting_override_text\n${rows}\n`, {}, 64 * 1024)
    expect(overrides.problems!.length).toBeLessThanOrEqual(11)
    expect(overrides.problems!.join("\n").length).toBeLessThan(2000)
  })
})

describe("contacts CSV: row numbers", () => {
  /** The line csv-parse's own `info` option reports for each contact row (non-blank, after the header). */
  const infoLines = (text: string) =>
    (parseCsv(text, { relax_column_count: true, skip_empty_lines: true, bom: true, info: true }) as unknown as Array<
      { record: Array<string>; info: { lines: number } }
    >)
      .filter(({ record }) => !record.every((value) => value.trim() === ""))
      .slice(1)
      .map(({ info }) => info.lines)

  it.each([
    ["LF", "phone_number,n\n+14155550101,a\n+14155550102,b\n"],
    ["CRLF and blank lines", "phone_number,n\r\n\r\n+14155550101,a\r\n\r\n\r\n+14155550102,b\r\n"],
    ["CR alone", "phone_number,n\r+14155550101,a\r+14155550102,b\r"],
    [
      "line breaks in quoted fields",
      "phone_number,n\n+14155550101,\"a\nb\nc\"\n+14155550102,\"x\r\ny\"\n+14155550103,z\n"
    ],
    ["no final line break", "phone_number,n\n+14155550101,a\n+14155550102,b"],
    [
      "a BOM, blank lines before the header and a row of blanks",
      "\uFEFF\n\nphone_number,n\n , \n+14155550101,a\n+14155550102,b\n"
    ]
  ])("%s: the line csv-parse's info option gives, however the input is chunked", async (_, text) => {
    const expected = infoLines(text)
    expect(expected.length).toBeGreaterThan(0)
    for (const size of [1, 3, 64, 1 << 20]) {
      const rows: Array<number> = []
      for await (
        const batch of readContacts(chunked(utf8(text), size), { defaultRegion: undefined, requiredColumns: [] })
      ) {
        rows.push(...batch.map((contact) => contact.row))
      }
      expect(rows).toEqual(expected)
    }
  })
})
