/**
 * Webhooks end to end: a real HTTP receiver on 127.0.0.1 verifies every delivery with the
 * `standardwebhooks` package; retries follow the injected clock; the outbox survives a restart.
 */
import Database from "better-sqlite3";
import { getEventListeners } from "node:events";
import { type IncomingHttpHeaders, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { postWebhook } from "../../src/protocols/jobs/webhooks/sender.js";
import { isPublicAddress } from "../../src/protocols/jobs/webhooks/url-policy.js";
import { type Receiver, startReceiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";
import { type Json, type JobsServer, startJobsServer, testWebhookSecret } from "./http-harness.js";

const open: Array<{ close(): Promise<void> } | JobsServer> = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await ("stop" in x ? x.stop() : x.close());
});

function verify(delivery: { headers: IncomingHttpHeaders; body: string }): Json {
  const headers = Object.fromEntries(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)]));
  return new Webhook(testWebhookSecret).verify(delivery.body, headers);
}

async function runJobToSuccess(s: JobsServer, queue: string, webhook: Record<string, unknown>): Promise<string> {
  const submitted = await s.api("POST", `/v1/queues/${queue}/jobs`, { input: { text: "great" }, webhook });
  expect(submitted.status).toBe(201);
  const [leased] = (await s.api("POST", `/v1/queues/${queue}/leases`, {})).body.jobs;
  await s.api("POST", `/v1/jobs/${leased.id}/complete`, { leaseId: leased.leaseId, output: { label: "positive" } });
  return leased.id as string;
}

/**
 * Makes the server claim its due deliveries at the clock's current time, and returns once that
 * claim is over: a job with a webhook to `probe` kicks the dispatcher, and its delivery being
 * recorded means the claim that took it ran. A delivery that stays unclaimed was not due.
 */
async function claimDueNow(s: JobsServer, probe: Receiver): Promise<void> {
  const id = await runJobToSuccess(s, "probe", { url: probe.url, events: ["job.succeeded"] });
  await waitFor(async () => (await s.api("GET", `/v1/jobs/${id}`)).body.job.webhookDeliveries[0].status === "delivered", { what: "the probe delivered" });
}

describe("webhooks", () => {
  it("delivers job.succeeded signed per Standard Webhooks, verified by the standardwebhooks package", async () => {
    const receiver = await startReceiver();
    const s = await startJobsServer();
    open.push(receiver, s);
    const id = await runJobToSuccess(s, "hooks", { url: receiver.url, events: ["job.started", "job.succeeded"] });
    await waitFor(() => receiver.received.length >= 2, { what: "two deliveries" });
    // Deliveries of one job may overlap, so their order isn't guaranteed: look them up by type.
    const payloads = new Map(receiver.received.map(verify).map((p) => [p.type as string, p]));
    expect([...payloads.keys()].sort()).toEqual(["job.started", "job.succeeded"]);
    expect(payloads.get("job.succeeded")).toMatchObject({ data: { id, status: "succeeded", output: { label: "positive" }, input: { text: "great" } } });
    expect(payloads.get("job.started").data.status).toBe("running");
    const [first] = receiver.received;
    expect(first!.headers["webhook-id"]).toMatch(/^msg_/);
    expect(first!.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(first!.headers["content-type"]).toBe("application/json");
    const job = await waitFor(async () => {
      const { body } = await s.api("GET", `/v1/jobs/${id}`);
      return body.job.webhookDeliveries.every((d: { status: string }) => d.status === "delivered") && body.job;
    });
    expect(job.webhookDeliveries).toHaveLength(2);
    expect(job.webhookDeliveries[1]).toMatchObject({ event: "job.succeeded", url: receiver.url, status: "delivered", attempts: 1, lastStatusCode: 200, nextAttemptAt: null });
  });

  it("a receiver that answers 500 twice gets the event on the third try, after backoff on the server's clock", async () => {
    const receiver = await startReceiver([500, 500, 200]);
    const probe = await startReceiver();
    const s = await startJobsServer();
    open.push(receiver, probe, s);
    const id = await runJobToSuccess(s, "flaky", { url: receiver.url });
    await waitFor(() => receiver.received.length === 1, { what: "first attempt" });
    const pending = await waitFor(async () => {
      const d = (await s.api("GET", `/v1/jobs/${id}`)).body.job.webhookDeliveries[0];
      return d.attempts === 1 && d;
    });
    expect(pending).toMatchObject({ status: "pending", lastStatusCode: 500, lastError: "HTTP 500" });
    const firstDelayMs = Date.parse(pending.nextAttemptAt) - s.clock.nowMs();
    expect(firstDelayMs).toBeGreaterThanOrEqual(4_500);
    expect(firstDelayMs).toBeLessThanOrEqual(5_500);
    // Nothing is retried before the backoff passes on the server's clock: a claim a millisecond
    // before it is due leaves it alone...
    s.clock.advance(firstDelayMs - 1);
    await claimDueNow(s, probe);
    expect(receiver.received).toHaveLength(1);
    expect((await s.api("GET", `/v1/jobs/${id}`)).body.job.webhookDeliveries[0]).toMatchObject({ attempts: 1, nextAttemptAt: pending.nextAttemptAt });
    // ...then each step of time brings the next attempt.
    await waitFor(() => {
      s.clock.advance(1_000);
      return receiver.received.length === 3;
    }, { what: "third attempt" });
    const delivered = await waitFor(async () => {
      const d = (await s.api("GET", `/v1/jobs/${id}`)).body.job.webhookDeliveries[0];
      return d.status === "delivered" && d;
    });
    expect(delivered).toMatchObject({ attempts: 3, lastStatusCode: 200 });
    const ids = new Set(receiver.received.map((r) => r.headers["webhook-id"]));
    expect(ids.size).toBe(1); // one event, one id: receivers dedupe on it
    for (const r of receiver.received) expect(verify(r).type).toBe("job.succeeded");
  });

  it("a 429 with Retry-After is retried no sooner than asked (capped at an hour); a 410 Gone is not retried", async () => {
    const slow = await startReceiver([{ status: 429, headers: { "retry-after": "600" } }, 200]);
    const gone = await startReceiver([410]);
    const probe = await startReceiver();
    const s = await startJobsServer();
    open.push(slow, gone, probe, s);
    const slowId = await runJobToSuccess(s, "slowdown", { url: slow.url });
    const goneId = await runJobToSuccess(s, "gone", { url: gone.url });
    const delivery = (id: string, ready: (d: Json) => boolean) =>
      waitFor(async () => {
        const d = (await s.api("GET", `/v1/jobs/${id}`)).body.job.webhookDeliveries[0];
        return ready(d) && d;
      });
    const pending = await delivery(slowId, (d) => d.attempts === 1);
    expect(pending).toMatchObject({ status: "pending", lastStatusCode: 429 });
    expect(Date.parse(pending.nextAttemptAt) - s.clock.nowMs()).toBe(600_000); // not the 5 s backoff
    expect(await delivery(goneId, (d) => d.attempts === 1)).toMatchObject({ status: "failed", lastStatusCode: 410, nextAttemptAt: null });
    s.clock.advance(599_999);
    await claimDueNow(s, probe);
    expect(slow.received).toHaveLength(1);
    expect(await delivery(slowId, () => true)).toMatchObject({ attempts: 1, nextAttemptAt: pending.nextAttemptAt });
    s.clock.advance(1);
    expect(await delivery(slowId, (d) => d.status === "delivered")).toMatchObject({ attempts: 2 });
    expect(gone.received).toHaveLength(1);
  });

  it("a delivery in backoff when the server restarts is still delivered", async () => {
    const receiver = await startReceiver([503, 200]);
    const first = await startJobsServer();
    open.push(receiver);
    const id = await runJobToSuccess(first, "restart", { url: receiver.url });
    await waitFor(async () => (await first.api("GET", `/v1/jobs/${id}`)).body.job.webhookDeliveries[0].attempts === 1, { what: "first attempt recorded" });
    await first.stop({ keepDataDir: true });
    first.clock.advance(60_000);
    const second = await startJobsServer({ dataDir: first.dataDir, clock: first.clock });
    open.push(second);
    await waitFor(() => receiver.received.length === 2, { what: "delivery after restart" });
    expect(verify(receiver.received[1]!)).toMatchObject({ type: "job.succeeded", data: { id } });
    await waitFor(async () => (await second.api("GET", `/v1/jobs/${id}`)).body.job.webhookDeliveries[0].status === "delivered", { what: "recorded" });
  });

  it("refuses private and loopback targets unless the server allows them (SSRF)", async () => {
    const receiver = await startReceiver();
    const s = await startJobsServer({ webhookAllowPrivate: false });
    open.push(receiver, s);
    for (const url of [receiver.url, "http://localhost:9/x", "http://10.1.2.3/x", "http://[::1]:8080/x", "http://169.254.169.254/latest/meta-data"]) {
      const res = await s.api("POST", "/v1/queues/q/jobs", { input: 1, webhook: { url } });
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe("ValidationFailed");
    }
    // At delivery time too: the socket's own lookup refuses (DNS rebinding can't get around the submit check).
    const refused = await postWebhook({ url: receiver.url.replace("127.0.0.1", "localhost"), body: "{}", headers: {}, timeoutMs: 2_000, policy: { allowPrivate: false } });
    expect(refused.delivered).toBe(false);
    expect(refused.error).toMatch(/non-public/);
    expect(receiver.received).toHaveLength(0);
    expect([isPublicAddress("8.8.8.8"), isPublicAddress("2606:4700::1111"), isPublicAddress("::ffff:127.0.0.1"), isPublicAddress("100.64.0.1"), isPublicAddress("fd00::1")]).toEqual([true, true, false, false, false]);
  });

  it("an attempt leaves no listener on the server-lifetime shutdown signal, and shutdown still cuts one in flight", async () => {
    const ok = await startReceiver([200, 500]);
    const hanging = await startReceiver(["hang"]);
    open.push(ok, hanging);
    const stopping = new AbortController();
    const attempt = (url: string) => postWebhook({ url, body: "{}", headers: {}, timeoutMs: 5_000, policy: { allowPrivate: true }, signal: stopping.signal });
    const outcomes = [await attempt(ok.url), await attempt(ok.url), await attempt(`http://127.0.0.1:${await closedPort()}/x`)];
    expect(outcomes.map((o) => o.statusCode ?? o.error)).toEqual([200, 500, expect.stringMatching(/ECONNREFUSED/)]);
    // One listener left per attempt was a leak (each held its request) and, past ten, a MaxListenersExceededWarning.
    expect(getEventListeners(stopping.signal, "abort")).toHaveLength(0);
    const inFlight = attempt(hanging.url);
    await waitFor(() => hanging.received.length === 1, { what: "the hanging receiver reached" });
    expect(getEventListeners(stopping.signal, "abort")).toHaveLength(1);
    stopping.abort();
    expect(await inFlight).toMatchObject({ delivered: false, error: expect.stringMatching(/shutting down/) });
    // Once stopping, nothing more is sent.
    expect(await attempt(ok.url)).toMatchObject({ delivered: false, error: expect.stringMatching(/shutting down/) });
    expect(ok.received).toHaveLength(2);
  });

  it("a receiver that hangs holds one delivery slot, not every other webhook on the server", async () => {
    const hanging = await startReceiver(["hang"]);
    const healthy = await startReceiver();
    const s = await startJobsServer();
    open.push(hanging, healthy, s);
    await runJobToSuccess(s, "slow-tenant", { url: hanging.url });
    await waitFor(() => hanging.received.length === 1, { what: "the hanging receiver reached" });
    // That attempt runs to its 10 s limit; the next job's delivery must not wait for it.
    const id = await runJobToSuccess(s, "other-tenant", { url: healthy.url });
    await waitFor(() => healthy.received.length === 1, { timeoutMs: 5_000, what: "the healthy receiver's delivery while the other hangs" });
    expect(verify(healthy.received[0]!)).toMatchObject({ type: "job.succeeded", data: { id } });
    expect(hanging.received).toHaveLength(1);
  });

  it("deleting the job queue (SQS DeleteQueue) keeps its pending deliveries: they still go out, then leave the outbox", async () => {
    const receiver = await startReceiver([503, 200]);
    const s = await startJobsServer();
    open.push(receiver);
    const id = await runJobToSuccess(s, "doomed", { url: receiver.url });
    await waitFor(async () => (await s.api("GET", `/v1/jobs/${id}`)).body.job.webhookDeliveries[0].attempts === 1, { what: "first attempt recorded" });
    const sqsJson = { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.DeleteQueue" };
    expect((await s.api("POST", "/", JSON.stringify({ QueueUrl: `${s.url}/000000000000/doomed` }), sqsJson)).status).toBe(200);
    expect((await s.api("GET", `/v1/jobs/${id}`)).status).toBe(404);
    await waitFor(
      () => {
        s.clock.advance(1_000);
        return receiver.received.length === 2;
      },
      { what: "the retry after the queue was deleted" },
    );
    expect(verify(receiver.received[1]!)).toMatchObject({ type: "job.succeeded", data: { id, status: "succeeded", output: { label: "positive" } } });
    expect(receiver.received[1]!.headers["webhook-id"]).toBe(receiver.received[0]!.headers["webhook-id"]);
    // Delivered, with its job gone, nothing can read the row any more: it must not linger. The
    // dispatcher records the delivery just after the receiver answered, so wait for that write
    // (read beside the running server: WAL lets a reader in) rather than stop before it lands.
    const db = new Database(join(s.dataDir, "sluice.db"), { readonly: true });
    try {
      await waitFor(() => db.prepare("SELECT count(*) FROM webhook_outbox").pluck().get() === 0, { what: "the delivered row to leave the outbox" });
    } finally {
      db.close();
      await s.stop();
    }
  });
});

/** A port nothing listens on: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
