/**
 * The dashboard in a real headless Chromium against a real server (manual clock): every page
 * loads without an error or a serious accessibility finding, follows the server live, and does
 * what its buttons say. Waits are for selectors and server state, never for time to pass: the
 * live streams tick when the test moves the server's clock.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { startServer } from "../../src/server/index.js";
import { type JobsServer, startJobsServer, testWebhookSecret } from "../jobs/http-harness.js";
import { waitFor } from "../support/wait.js";
import { accessibilityProblems, launchChromium, screenshot, watchPageErrors } from "./browser.js";

let browser: Browser;
let context: BrowserContext;
let s: JobsServer;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  s = await startJobsServer();
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  pageErrors = watchPageErrors(page);
});
afterEach(async () => {
  await context?.close();
  await s?.stop();
  expect(pageErrors).toEqual([]);
});

/** A job on `queue` that failed for good (its message is in `<queue>-dlq`). */
async function failedJob(queue: string, input: unknown): Promise<string> {
  const { job } = (await s.api("POST", `/v1/queues/${queue}/jobs`, { input, maxAttempts: 1 })).body;
  const [leased] = (await s.api("POST", `/v1/queues/${queue}/leases`, { max: 1 })).body.jobs;
  expect(leased.id, "the queue had no other job ready").toBe(job.id);
  await s.api("POST", `/v1/jobs/${job.id}/fail`, { leaseId: leased.leaseId, error: { message: "CUDA out of memory", type: "OOM" }, retryable: false });
  return job.id;
}

/** The text of the first element matching `selector`, once it is `expected`. */
async function textBecomes(selector: string, expected: string): Promise<void> {
  await page.waitForFunction(([sel, text]) => document.querySelector(sel!)?.textContent?.trim() === text, [selector, expected] as const);
}

/**
 * Two minutes of traffic before the page opens (the throughput history the sparklines draw): each
 * 5 s bucket, `sent(i)` messages sent to `queue` and the ones before them received and deleted.
 */
async function traffic(queueName: string, sent: (bucket: number) => number): Promise<void> {
  const queue = await s.server.queues.getQueue("", queueName);
  for (let bucket = 0; bucket < 24; bucket++) {
    const received = await s.server.queues.receiveMessages(queue, { maxMessages: 10 });
    await s.server.queues.deleteMessages(queue, received.map((m) => m.receiptHandle));
    const n = sent(bucket);
    if (n > 0) await s.server.queues.sendMessages(queue, Array.from({ length: n }, (_, k) => ({ body: `m${bucket}.${k}` })));
    s.clock.advance(5_000);
  }
}

async function expectAccessible(): Promise<void> {
  expect(await accessibilityProblems(page)).toEqual([]);
}

describe("dashboard", () => {
  it("a browser opening the server's address lands on the queues table, which follows the queues live", async () => {
    await s.server.queues.createQueue("", { name: "orders" });
    await s.server.queues.createQueue("", { name: "emails" });
    await s.server.queues.createQueue("", { name: "payments.fifo", config: { fifoQueue: true, contentBasedDeduplication: true } });
    await traffic("emails", (i) => 4 + Math.round(4 * Math.sin(i / 3)));
    await failedJob("embed", { text: "a long one" });
    await s.api("POST", "/v1/queues/embed/jobs", { input: { text: "hi" } });
    await page.goto(`${s.url}/`);
    expect(new URL(page.url()).pathname).toBe("/ui/");
    await textBecomes('tr[data-queue="embed"] td[data-stat="visible"]', "1");
    await textBecomes('tr[data-queue="orders"] td[data-stat="visible"]', "0");
    await page.getByText("Live").first().waitFor();

    await s.api("POST", "/v1/queues/orders/messages", { body: "one" });
    await s.api("POST", "/v1/queues/orders/messages", { body: "two", delaySeconds: 60 });
    s.clock.advance(2_000); // the stream's next snapshot
    await textBecomes('tr[data-queue="orders"] td[data-stat="visible"]', "1");
    await textBecomes('tr[data-queue="orders"] td[data-stat="delayed"]', "1");
    // The sparkline says what it draws (for screen readers, and as a tooltip).
    expect(await page.locator('tr[data-queue="orders"] svg.sparkline').getAttribute("aria-label")).toMatch(/completed.*sent/);
    await screenshot(page, "queues");
    await page.getByRole("searchbox", { name: "Name starts with" }).fill("emb");
    await page.waitForFunction(() => document.querySelectorAll("tr[data-queue]").length === 2);
    expect(await page.locator("tr[data-queue]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-queue")))).toEqual(["embed", "embed-dlq"]);
    await expectAccessible();
  });

  it("a queue's page: send a test message, peek at it (changing nothing), change an attribute, purge", async () => {
    await s.server.queues.createQueue("", { name: "orders" });
    await page.goto(`${s.url}/ui/`);
    await page.getByRole("link", { name: "orders", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "orders" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/ui/queues/orders");

    await page.getByText("Send a test message").click();
    await page.getByLabel("Body").fill('{"order": 42}');
    await page.getByLabel("Priority, 0–9", { exact: true }).fill("7");
    await page.getByRole("button", { name: "Send", exact: true }).click();
    await page.getByText(/^Sent message /).waitFor();

    await page.getByRole("button", { name: "Peek", exact: true }).click();
    await page.locator("li.message").first().waitFor();
    expect(await page.locator("li.message pre").first().textContent()).toBe('{"order": 42}');
    await page.getByText("1 message shown; none was received or changed.").waitFor();
    const [peeked] = (await s.api("GET", "/v1/queues/orders/messages")).body.messages;
    expect(peeked).toMatchObject({ receiveCount: 0, state: "visible", priority: 7 });

    await page.getByText("Attributes", { exact: true }).click();
    await page.getByLabel("Visibility timeout, seconds").fill("90");
    await page.getByRole("button", { name: "Save attributes" }).click();
    await page.getByText("Saved: visibilityTimeoutSeconds.").waitFor();
    expect((await s.server.queues.getQueue("", "orders")).config.visibilityTimeoutSeconds).toBe(90);

    await page.getByRole("button", { name: "Purge…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText(/Delete every message of orders/).waitFor();
    await expectAccessible();
    await dialog.getByRole("button", { name: "Purge", exact: true }).click();
    await page.getByText("Purged 1 messages.").waitFor();
    // orders is no dead-letter queue: nothing to redrive.
    expect(await page.getByRole("heading", { name: "Redrive" }).count()).toBe(0);
    expect((await s.api("GET", "/v1/queues/orders")).body.queue.stats.messages.visible).toBe(0);
    await expectAccessible();
  });

  it("pauses a queue from its page (a waiting lease stays unanswered) and resumes it (the lease gets its job)", async () => {
    await s.api("POST", "/v1/queues/render/jobs", { input: { frame: 1 } });
    await page.goto(`${s.url}/ui/queues/render`);
    await page.getByRole("heading", { level: 1, name: /render/ }).waitFor();
    await page.getByRole("button", { name: "Pause queue" }).click();
    await page.getByText("Paused: leases and receives return nothing until it resumes.").waitFor();
    // The page follows the queue's stream: the badge and the button's label come from it.
    s.clock.advance(2_000); // the stream's next snapshot
    await page.locator('[data-state="paused"]').waitFor();
    await page.getByRole("button", { name: "Resume queue" }).waitFor();
    expect((await s.api("GET", "/v1/queues/render")).body.queue.paused).toBe(true);
    const lease = s.api("POST", "/v1/queues/render/leases", { max: 1, waitSeconds: 20 });
    await waitFor(() => s.server.queues.waiters.waiterCount() > 0);
    await expectAccessible();
    await page.getByRole("button", { name: "Resume queue" }).click();
    await page.getByText("Resumed.").waitFor();
    const { jobs } = (await lease).body;
    expect(jobs.map((j: { input: unknown }) => j.input)).toEqual([{ frame: 1 }]);
    s.clock.advance(2_000);
    await page.getByRole("button", { name: "Pause queue" }).waitFor();
    expect(await page.locator('[data-state="paused"]').count()).toBe(0);
  });

  it("redrives a dead-letter queue and the progress bar follows it to 100 %", async () => {
    const ids = [];
    for (let n = 0; n < 3; n++) ids.push(await failedJob("embed", { n }));
    await page.goto(`${s.url}/ui/queues/embed-dlq`);
    await textBecomes('dd[data-stat="visible"]', "3");
    await page.locator("p", { hasText: "Dead-letter queue of embed." }).waitFor();
    await page.getByLabel("At most, messages per second").fill("1");
    await page.getByRole("button", { name: "Start redrive" }).click();
    await page.getByText("Redrive started: 3 messages to move.").waitFor();

    // One message a second: each turn of the clock moves one and sends the page a snapshot.
    const runner = s.server.queues.moveTasks.runner;
    await runner.idle();
    s.clock.advance(1_000);
    const bar = '[role="progressbar"][aria-label="Redrive progress"]';
    await page.waitForFunction((sel) => {
      const now = Number(document.querySelector(sel)?.getAttribute("aria-valuenow"));
      return now > 0 && now < 100;
    }, bar);
    await page.getByRole("button", { name: "Cancel redrive" }).waitFor();
    await screenshot(page, "queue-redrive");
    for (;;) {
      await runner.idle();
      const [task] = (await s.api("GET", "/v1/queues/embed-dlq/redrive")).body.tasks;
      s.clock.advance(1_000);
      if (task.status === "COMPLETED") break;
    }
    await page.waitForSelector(`${bar}[aria-valuenow="100"]`);
    await page.getByText("Latest redrive: completed 3 of 3 moved").waitFor();
    await textBecomes('dd[data-stat="visible"]', "0");
    // The failed jobs run again.
    const leased = (await s.api("POST", "/v1/queues/embed/leases", { max: 10 })).body.jobs;
    expect(leased.map((j: { id: string }) => j.id).sort()).toEqual(ids.sort());
    await expectAccessible();
  });

  it("cancels a running job from its page, follows it to canceled, and retries it", async () => {
    const { job } = (await s.api("POST", "/v1/queues/gpu/jobs", { input: { prompt: "a cat" }, metadata: { user: "u1" } })).body;
    const [leased] = (await s.api("POST", "/v1/queues/gpu/leases", { max: 1 })).body.jobs;
    await page.goto(`${s.url}/ui/jobs/${job.id}`);
    await page.locator(".badge.status-running").waitFor();
    expect(await page.getByLabel("Input").textContent()).toBe(JSON.stringify({ prompt: "a cat" }, null, 2));

    await page.getByRole("button", { name: "Cancel job…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel job", exact: true }).click();
    await page.getByText("Cancel requested: the worker sees it at its next heartbeat.").waitFor();
    await page.locator(".badge", { hasText: "cancel requested" }).first().waitFor();

    // The worker hears of it on its next heartbeat and stops: the job ends canceled, live.
    const beat = await s.api("POST", `/v1/jobs/${job.id}/heartbeat`, { leaseId: leased.leaseId });
    expect(beat.body.cancelRequested).toBe(true);
    await s.api("POST", `/v1/jobs/${job.id}/fail`, { leaseId: leased.leaseId, error: { message: "stopped on request" } });
    await page.locator(".badge.status-canceled").waitFor();
    await page.locator(".timeline li", { hasText: "Canceled" }).waitFor();
    expect(await page.locator(".timeline li").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("Cancel requested")]));
    await expectAccessible();
    await screenshot(page, "job");

    await page.getByRole("button", { name: "Retry job" }).click();
    await page.locator(".badge.status-queued").waitFor();
    expect((await s.api("GET", `/v1/jobs/${job.id}`)).body.job).toMatchObject({ status: "queued", attempt: 0 });
  });

  it("a job's page lists its input and output attachments with size, content type and a download link", async () => {
    const upload = async (bytes: Uint8Array<ArrayBuffer>, contentType: string): Promise<string> => {
      const created = (await s.api("POST", "/v1/blobs", { contentType })).body;
      const put = await fetch(created.uploadUrl, { method: "PUT", body: bytes, headers: { "content-type": contentType } });
      expect(put.ok).toBe(true);
      return created.blobId;
    };
    const picture = new Uint8Array(3000).map((_, i) => i % 251);
    const edges = new TextEncoder().encode("P5\n2 1\n255\n\x00\xff");
    const { job } = (await s.api("POST", "/v1/queues/vision/jobs", { input: { task: "edges" }, attachments: { picture: await upload(picture, "image/x-portable-graymap") } })).body;
    const [leased] = (await s.api("POST", "/v1/queues/vision/leases", { max: 1 })).body.jobs;
    await page.goto(`${s.url}/ui/jobs/${job.id}`);
    const inputs = page.getByRole("region", { name: "Input attachments" });
    await inputs.getByRole("row", { name: /picture/ }).waitFor();
    expect(await inputs.getByRole("row").nth(1).locator("td").allTextContents()).toEqual(["2.9 KiB", "image/x-portable-graymap", expect.stringMatching(/^[0-9a-f]{12}…$/), "Download"]);
    expect(await page.getByRole("region", { name: "Output attachments" }).count()).toBe(0);

    // The worker completes with a file of its own: it shows up live, with its download link.
    await s.api("POST", `/v1/jobs/${job.id}/complete`, { leaseId: leased.leaseId, output: { found: 1 }, outputAttachments: { edges: await upload(edges, "image/x-portable-graymap") } });
    await page.locator(".badge.status-succeeded").waitFor();
    const outputs = page.getByRole("region", { name: "Output attachments" });
    await outputs.getByRole("row", { name: /edges/ }).waitFor();
    expect(await outputs.getByRole("row").nth(1).locator("td").first().textContent()).toBe(`${edges.length} B`);
    for (const [region, name, bytes] of [[outputs, "edges", edges], [inputs, "picture", picture]] as const) {
      const [download] = await Promise.all([page.waitForEvent("download"), region.getByRole("link", { name: `Download ${name}` }).click()]);
      const path = await download.path();
      expect(new Uint8Array(await readFile(path))).toEqual(bytes);
    }
    await expectAccessible();
  });

  it("browses jobs by queue and status, and shows new ones as they come", async () => {
    const failed = await failedJob("alpha", 2);
    await s.api("POST", "/v1/queues/alpha/jobs", { input: 1 });
    await s.api("POST", "/v1/queues/beta/jobs", { input: 3 });
    await page.goto(`${s.url}/ui/jobs`);
    // No queue chosen: the first with jobs.
    await page.waitForURL(/\/ui\/jobs\?queue=alpha$/);
    await page.waitForFunction(() => document.querySelectorAll("tr[data-job]").length === 2);

    await page.getByRole("combobox", { name: /^Status\b/ }).selectOption("failed");
    await page.waitForURL(/status=failed/);
    await page.waitForFunction((id) => [...document.querySelectorAll("tr[data-job]")].map((r) => r.getAttribute("data-job")).join() === id, failed);
    await page.getByRole("combobox", { name: /^Status\b/ }).selectOption("queued");
    await page.waitForFunction(() => document.querySelectorAll("tr[data-job]").length === 1);
    await page.getByText("Live", { exact: true }).waitFor();
    const { job } = (await s.api("POST", "/v1/queues/alpha/jobs", { input: 4 })).body;
    await page.locator(`tr[data-job="${job.id}"]`).waitFor();

    await page.getByRole("combobox", { name: /^Queue\b/ }).selectOption("beta");
    await page.waitForURL(/queue=beta/);
    await page.locator("tr[data-job] a").first().click();
    await page.getByRole("heading", { level: 1, name: /^Job / }).waitFor();
    expect(await page.getByLabel("Input").textContent()).toBe("3");
    await page.goBack();
    await page.locator("tr[data-job]").first().waitFor();
    await expectAccessible();
  });

  it("lists schedules with their next and last runs, follows a run live, and pauses and resumes one", async () => {
    const nightly = (await s.api("PUT", "/v1/schedules/nightly", { queue: "reports", cron: "30 2 * * *", timezone: "America/New_York", input: { report: "daily" }, options: { priority: 5 } })).body.schedule;
    const beat = (await s.api("PUT", "/v1/schedules/heartbeat", { queue: "pings", everySeconds: 60, input: { ping: true } })).body.schedule;
    await page.goto(`${s.url}/ui/`);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Schedules" }).click();
    await page.getByRole("heading", { level: 1, name: "Schedules" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/ui/schedules");
    const row = (name: string) => page.locator(`tr[data-schedule="${name}"]`);
    const runTimes = (name: string, field: string) => row(name).locator(`[data-field="${field}"] time`).evaluateAll((ts) => ts.map((t) => t.getAttribute("datetime")));
    await row("nightly").waitFor();
    expect(await page.locator("tr[data-schedule]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-schedule")))).toEqual(["heartbeat", "nightly"]);
    expect(await row("nightly").locator("td").allTextContents()).toEqual(expect.arrayContaining(["reports", "30 2 * * *", "America/New_York", "active"]));
    expect(await row("heartbeat").locator("td").allTextContents()).toEqual(expect.arrayContaining(["pings", "every 1 min", "UTC", "active"]));
    expect(await runTimes("nightly", "nextRuns")).toEqual(nightly.nextRuns.slice(0, 3));
    expect(await row("nightly").locator('[data-field="lastRun"]').textContent()).toBe("—");
    await page.getByText("Live", { exact: true }).waitFor();

    // The heartbeat's first run comes due: its job is created, and the row moves on, live.
    const [firstRun, secondRun] = beat.nextRuns as string[];
    s.clock.advance(Date.parse(firstRun!) - s.clock.nowMs() + 1_000);
    await waitFor(
      async () => {
        s.clock.advance(0); // the scheduler re-arms after its pass: fire what is due now
        return (await runTimes("heartbeat", "lastRun"))[0] === firstRun;
      },
      { what: "the heartbeat's last run on the page" },
    );
    expect((await runTimes("heartbeat", "nextRuns"))[0]).toBe(secondRun);
    const [job] = (await s.api("GET", "/v1/queues/pings/jobs")).body.jobs;
    expect(job.idempotencyKey).toBe(`schedule:heartbeat:${firstRun}`);
    // The last run links to the job it created.
    expect(await row("heartbeat").locator('[data-field="lastRun"] a').getAttribute("href")).toBe(`/ui/jobs/${job.id}`);
    await screenshot(page, "schedules");
    await expectAccessible();

    await page.getByRole("button", { name: "Pause heartbeat" }).click();
    await page.getByText(/^Paused heartbeat/).waitFor();
    await textBecomes('tr[data-schedule="heartbeat"] [data-field="state"]', "paused");
    expect(await row("heartbeat").locator('[data-field="nextRuns"]').textContent()).toBe("—");
    expect((await s.api("GET", "/v1/schedules/heartbeat")).body.schedule.paused).toBe(true);
    await page.getByRole("button", { name: "Resume heartbeat" }).click();
    await textBecomes('tr[data-schedule="heartbeat"] [data-field="state"]', "active");
    expect((await s.api("GET", "/v1/schedules/heartbeat")).body.schedule).toMatchObject({ paused: false, nextRuns: expect.arrayContaining([expect.any(String)]) });

    // The heartbeat's page links to its last run's job, which opens.
    await row("heartbeat").getByRole("link", { name: "heartbeat" }).click();
    await page.getByRole("heading", { level: 1, name: /^heartbeat/ }).waitFor();
    await page.getByRole("navigation", { name: "Schedule links" }).getByRole("link", { name: "Last run's job" }).click();
    await page.waitForURL(`${s.url}/ui/jobs/${job.id}`);
    await page.getByText(`schedule:heartbeat:${firstRun}`).first().waitFor();
    await page.goBack();
    await page.getByRole("heading", { level: 1, name: /^heartbeat/ }).waitFor();
    expect(await page.locator('dd[data-field="lastRun"] a').getAttribute("href")).toBe(`/ui/jobs/${job.id}`);
    await page.goBack();

    // One schedule's page: its definition and every next run the server gives.
    await row("nightly").getByRole("link", { name: "nightly" }).click();
    await page.getByRole("heading", { level: 1, name: /^nightly/ }).waitFor();
    // The heading shows while the schedule loads; its runs list only once it has.
    await page.locator('ol[data-field="nextRuns"]').waitFor();
    expect(await page.locator('ol[data-field="nextRuns"] time').evaluateAll((ts) => ts.map((t) => t.getAttribute("datetime")))).toEqual(nightly.nextRuns);
    expect(await page.getByLabel("Input").textContent()).toBe(JSON.stringify({ report: "daily" }, null, 2));
    expect(await page.getByLabel("Job options").textContent()).toBe(JSON.stringify({ priority: 5 }, null, 2));
    await expectAccessible();
    await page.getByRole("button", { name: "Pause nightly" }).click();
    await page.getByText("None while paused.").waitFor();
    expect((await s.api("GET", "/v1/schedules/nightly")).body.schedule.paused).toBe(true);

    const errorsBefore = pageErrors.length;
    await page.goto(`${s.url}/ui/schedules/nope`);
    await page.getByRole("alert").filter({ hasText: "Schedule nope does not exist." }).waitFor();
    // The browser logs the server's 404 for it: that answer is what this checks, not a fault.
    expect(pageErrors.splice(errorsBefore)).toEqual([expect.stringMatching(/status of 404/)]);
  });

  it("lists the workers seen in the last minute with their queues, labels and running jobs", async () => {
    await page.goto(`${s.url}/ui/workers`);
    await page.getByText(/No workers seen in the last minute/).waitFor();
    await s.api("POST", "/v1/queues/infer/jobs", { input: 1, requires: { gpu: "a100" } });
    await s.api("POST", "/v1/queues/infer/leases", { max: 1, workerId: "gpu-node-7", labels: { gpu: "a100", region: "eu" } });
    await s.api("POST", "/v1/queues/embed/leases", { workerId: "cpu-1" });
    await s.server.jobs.flushWorkers();
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.locator('tr[data-worker="gpu-node-7"]').waitFor();
    expect(await page.locator('tr[data-worker="gpu-node-7"] [data-field="labels"]').textContent()).toBe("gpu=a100 region=eu");
    expect(await page.locator('tr[data-worker="gpu-node-7"] [data-field="running"]').textContent()).toBe("1");
    expect(await page.locator('tr[data-worker="cpu-1"] [data-field="queues"]').textContent()).toBe("embed");
    expect(await page.getByRole("link", { name: "Workers" }).getAttribute("aria-current")).toBe("page");
    await page.locator('tr[data-worker="gpu-node-7"] a', { hasText: "infer" }).click();
    await page.waitForURL(/\/ui\/queues\/infer$/);
    await page.goBack();
    await page.locator('tr[data-worker="cpu-1"]').waitFor();
    await expectAccessible();
  });

  it("reads on a phone: nothing wider than the screen, and every control reachable by keyboard", async () => {
    await failedJob("embed", { n: 1 });
    const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    try {
      const small = await phone.newPage();
      const errors = watchPageErrors(small);
      await s.api("PUT", "/v1/schedules/nightly-embeddings", { queue: "embed", cron: "0 3 * * *", timezone: "Europe/Berlin", input: { all: true } });
      for (const path of ["/ui/", "/ui/queues/embed-dlq", "/ui/jobs?queue=embed", "/ui/schedules"]) {
        await small.goto(`${s.url}${path}`);
        await small.locator("main h1").waitFor();
        await small.locator("main table, main dl.stats").first().waitFor();
        const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, path).toBeLessThanOrEqual(0);
      }
      expect(errors).toEqual([]);
    } finally {
      await phone.close();
    }

    await page.goto(`${s.url}/ui/`);
    await page.locator('tr[data-queue="embed"]').waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    // Tab to the queue's link and follow it: the new page's heading takes the focus.
    for (let i = 0; i < 30 && (await page.evaluate(() => document.activeElement?.getAttribute("href"))) !== "/ui/queues/embed"; i++) await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { level: 1, name: "embed" }).waitFor();
    await page.waitForFunction(() => document.activeElement?.tagName === "H1");
  });

  it("serves its files with an ETag and gzip, 404s a missing one, and leaves SQS GET requests to SQS", async () => {
    const shell = await fetch(`${s.url}/ui/queues/anything`, { headers: { "accept-encoding": "gzip" } });
    expect(shell.status).toBe(200);
    expect(shell.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(shell.headers.get("content-security-policy")).toContain("script-src 'self' 'sha256-");
    const etag = shell.headers.get("etag")!;
    expect((await fetch(`${s.url}/ui/`, { headers: { "if-none-match": etag } })).status).toBe(304);
    const vendor = await fetch(`${s.url}/ui/vendor/preact.mjs`);
    expect([vendor.status, vendor.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
    expect(await vendor.text()).not.toContain("sourceMappingURL");
    const missing = await fetch(`${s.url}/ui/assets/nope.js`);
    expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([404, "RouteNotFound"]);
    const browserRoot = await fetch(`${s.url}/`, { headers: { accept: "text/html,application/xhtml+xml" }, redirect: "manual" });
    expect([browserRoot.status, browserRoot.headers.get("location")]).toEqual([302, "/ui/"]);
    const sqsGet = await fetch(`${s.url}/?Action=ListQueues&Version=2012-11-05`, { headers: { accept: "text/html" } });
    expect([sqsGet.status, (await sqsGet.text()).includes("<ListQueuesResponse")]).toEqual([200, true]);
    const curlRoot = await fetch(`${s.url}/`, { redirect: "manual" });
    expect(curlRoot.status).toBe(400); // an SQS request without an Action, as before
  });
});

describe("dashboard with credentials", () => {
  it("asks for a token, shows the queues with a read token, and refuses what it may not do", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sluice-ui-auth-"));
    const credentialsFile = join(dir, "credentials.toml");
    await writeFile(
      credentialsFile,
      ['[[tokens]]', 'name = "dashboard"', 'token = "tok-read-0123456789abcdef"', 'accountId = "000000000000"', 'scopes = ["read"]', ""].join("\n"),
    );
    const secured = await startServer({ host: "127.0.0.1", port: 0, dataDir: join(dir, "data"), clock: new ManualClock(Date.now()), webhookSecret: testWebhookSecret, credentialsFile, logLevel: "warn" });
    try {
      await secured.queues.createQueue("", { name: "orders" });
      const authPage = await context.newPage();
      const errors = watchPageErrors(authPage);
      await authPage.goto(`${secured.url}/ui/`);
      await authPage.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
      await authPage.getByLabel("Token").fill("wrong-token-0123456789");
      await authPage.getByRole("button", { name: "Sign in" }).click();
      await authPage.getByText("The server did not accept the token given.").waitFor();
      await authPage.getByLabel("Token").fill("tok-read-0123456789abcdef");
      await authPage.getByRole("button", { name: "Sign in" }).click();
      await authPage.locator('tr[data-queue="orders"]').waitFor();

      await authPage.getByRole("link", { name: "orders", exact: true }).click();
      await authPage.getByRole("button", { name: "Purge…" }).click();
      await authPage.getByRole("dialog").getByRole("button", { name: "Purge", exact: true }).click();
      await authPage.getByRole("alert").filter({ hasText: /scope/ }).waitFor();
      await waitFor(async () => (await secured.queues.getQueue("", "orders")) !== undefined);
      // The browser's own 401/403 console lines are the server refusing, as it should.
      expect(errors.filter((e) => !/status of 40[13]/.test(e))).toEqual([]);
    } finally {
      await secured.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
