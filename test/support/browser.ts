import axe from "axe-core"
import * as fs from "node:fs"
import * as path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"

/** Debian's Chromium (`apt-get install chromium`); CI installs it, elsewhere the browser tests skip. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
export const hasChromium = fs.existsSync(chromiumPath)

/** `args`: more command-line switches (e.g. a fake microphone playing a file). */
export const launchChromium = (args: ReadonlyArray<string> = []): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", ...args]
  })

/** Where the test run leaves its screenshots (gitignored). */
export const screenshotDir = path.join(process.cwd(), ".console-screenshots")

export const screenshot = async (page: Page, name: string) => {
  fs.mkdirSync(screenshotDir, { recursive: true })
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true })
}

export interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly targets: ReadonlyArray<string>
}

/** axe-core's serious and critical violations on the page as it is now. */
export const seriousViolations = async (page: Page): Promise<ReadonlyArray<AxeViolation>> => {
  // The page's globals: this file is type-checked without the DOM library.
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.addScriptTag({ content: axe.source })
  return page.evaluate(async () => {
    const browser = globalThis as any
    const results = await browser.axe.run(browser.document, { resultTypes: ["violations"] })
    return results.violations
      .filter((violation: any) => violation.impact === "serious" || violation.impact === "critical")
      .map((violation: any) => ({
        id: violation.id,
        impact: violation.impact,
        help: violation.help,
        targets: violation.nodes.map((node: any) => String(node.target))
      }))
  })
}
