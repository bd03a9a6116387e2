/**
 * `npm run measure:dashboard`: the dashboard's page weight and load time, in Debian's headless
 * Chromium against a local server with 20 queues. Each cold load is a fresh browser context (empty
 * cache); a warm load reloads the page in the same one (its files answer 304). Prints medians and
 * ranges over `--loads N` (default 15). The live stream is left out of the bytes: it is data that
 * keeps coming, not the page.
 */
import { rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { dashboardAssets } from "../../src/dashboard/assets.js";
import { startServer } from "../../src/server/index.js";
import { launchChromium } from "./browser.js";

const loadsArg = process.argv.indexOf("--loads");
const loads = loadsArg > 0 ? Number(process.argv[loadsArg + 1]) : 15;

interface Load {
  bytes: number;
  requests: number;
  domContentLoadedMs: number;
  firstContentfulPaintMs: number;
  /** When the queues table (the first live data) is on screen. */
  tableMs: number;
}

async function measure(page: Page, url: string, reload: boolean): Promise<Load> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  const urls = new Map<string, string>();
  let bytes = 0;
  let requests = 0;
  cdp.on("Network.responseReceived", (e: { requestId: string; response: { url: string } }) => void urls.set(e.requestId, e.response.url));
  cdp.on("Network.loadingFinished", (e: { requestId: string; encodedDataLength: number }) => {
    if ((urls.get(e.requestId) ?? "").includes("/v1/events")) return;
    bytes += e.encodedDataLength;
    requests++;
  });
  if (reload) await page.reload();
  else await page.goto(url);
  const tableMs = await page.waitForFunction(() => document.querySelectorAll("table.queues tbody tr").length === 20 && performance.now()).then((h) => h.jsonValue() as Promise<number>);
  const timing = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
    const fcp = performance.getEntriesByType("paint").find((p) => p.name === "first-contentful-paint");
    return { domContentLoadedMs: nav.domContentLoadedEventEnd, firstContentfulPaintMs: fcp?.startTime ?? Number.NaN };
  });
  await cdp.detach();
  return { bytes, requests, tableMs, ...timing };
}

function summary(label: string, runs: Load[]): string {
  const stat = (pick: (l: Load) => number, unit: string, digits = 0): string => {
    const v = runs.map(pick).sort((a, b) => a - b);
    const median = v[Math.floor(v.length / 2)]!;
    return `${median.toFixed(digits)} ${unit} (${v[0]!.toFixed(digits)}–${v[v.length - 1]!.toFixed(digits)})`;
  };
  return [
    `${label} (${runs.length} loads; median (min–max))`,
    `  transferred:             ${stat((l) => l.bytes / 1024, "KiB", 1)} in ${stat((l) => l.requests, "requests")}`,
    `  DOMContentLoaded:        ${stat((l) => l.domContentLoadedMs, "ms")}`,
    `  first contentful paint:  ${stat((l) => l.firstContentfulPaintMs, "ms")}`,
    `  queues table on screen:  ${stat((l) => l.tableMs, "ms")}`,
  ].join("\n");
}

async function main(): Promise<void> {
  const dir = join(tmpdir(), `sluice-measure-ui-${process.pid}`);
  const server = await startServer({ host: "127.0.0.1", port: 0, dataDir: dir, webhookSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", logLevel: "warn" });
  let browser: Browser | undefined;
  try {
    // 10 job queues (each with its -dlq) with a few jobs each: 20 rows.
    for (let q = 0; q < 10; q++) for (let j = 0; j < 5; j++) await server.jobs.submit("", `queue-${q}`, { input: { q, j } });
    const assets = [...(await dashboardAssets()).entries()];
    const raw = assets.reduce((n, [, a]) => n + a.body.length, 0);
    const gzipped = assets.reduce((n, [, a]) => n + (a.gzip ?? a.body).length, 0);
    browser = await launchChromium();
    const cold: Load[] = [];
    const warm: Load[] = [];
    for (let i = 0; i < loads; i++) {
      const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
      const page = await context.newPage();
      cold.push(await measure(page, `${server.url}/ui/`, false));
      warm.push(await measure(page, `${server.url}/ui/`, true));
      await context.close();
    }
    console.log(`Dashboard files: ${assets.length}, ${(raw / 1024).toFixed(1)} KiB as written, ${(gzipped / 1024).toFixed(1)} KiB gzipped (what a browser downloads)`);
    console.log(`Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, Node ${process.version}, server and browser on the same host`);
    console.log(summary("Cold load (empty cache)", cold));
    console.log(summary("Warm load (reload: files revalidated, 304)", warm));
  } finally {
    await browser?.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
