/**
 * A real headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core: no browser is
 * downloaded) for the dashboard tests, with axe-core's accessibility check and a screenshot helper.
 */
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
import { repoRoot } from "../support/cli.js";
import { docsScreenshots } from "./docs-screenshots.js";

export const chromiumPath = "/usr/bin/chromium";
const launchArgs = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} is missing: install Debian's chromium (apt-get install chromium; .ci/run does).`);
  return chromium.launch({ executablePath: chromiumPath, args: launchArgs });
}

/** Fails the test on any error the page logs or throws (a CSP refusal, a failed module, a bug). */
export function watchPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(`console: ${msg.text()}`);
  });
  return errors;
}

/** Evaluated through the DevTools protocol, which the page's Content-Security-Policy doesn't govern (a <script> tag would be refused). */
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** axe-core's WCAG 2.1 A/AA checks on the page as it is: the serious and critical findings, as readable lines. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return result.violations;
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
}

/**
 * Screenshots go to .tmp/screenshots/; with SLUICE_DOCS_SCREENSHOTS=1 (`npm run docs:screenshots`)
 * the ones docs/ shows are written there too, so the docs' pictures are the UI as it is.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = join(repoRoot, ".tmp", "screenshots");
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  const docsPath = docsScreenshots[name];
  if (docsPath !== undefined && process.env.SLUICE_DOCS_SCREENSHOTS === "1") await copyFile(path, join(repoRoot, docsPath));
  return path;
}
