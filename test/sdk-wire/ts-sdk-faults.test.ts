/**
 * The TypeScript SDK against the server behaviours the Python SDK's test_retries.py meets, through
 * the same fault proxy (test/support/fault-proxy.ts) and the same real kills: docs/sdk-wire-spec.md.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Sluice, type SluiceApiError, SluiceNetworkError } from "../../client/src/index.js";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

const proxies: FaultProxy[] = [];
async function proxyTo(target: string): Promise<FaultProxy> {
  const proxy = await startFaultProxy(target);
  proxies.push(proxy);
  return proxy;
}
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
  await killAllChildren();
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

let queueCount = 0;
const freshQueue = (): string => `ts-faults-${process.pid}-${++queueCount}`;
const submitPath = String.raw`^/v1/queues/[^/]+/jobs(\?.*)?$`;

async function queuedJobs(server: { url: string }, queue: string): Promise<number> {
  const res = await fetch(`${server.url}/v1/queues/${queue}`);
  return ((await res.json()) as { queue: { stats: { jobs: { queued: number } } } }).queue.stats.jobs.queued;
}

describe("through the fault proxy", () => {
  let server: TestServer;
  const started = startTestServer().then((s) => (server = s));

  // wire: retry-after
  it("a 503 with Retry-After is retried no sooner than asked", async () => {
    await started;
    const job = await new Sluice({ url: server.url }).queue(freshQueue()).submit({ x: 1 });
    const proxy = await proxyTo(server.url);
    proxy.addFault({ path: "^/v1/jobs/", method: "GET", action: "status", status: 503, retryAfter: "1" });
    expect((await new Sluice({ url: proxy.url }).jobs.get(job.id)).id).toBe(job.id);
    const gets = proxy.log().filter((r) => r.method === "GET");
    expect(gets.map((r) => r.fault)).toEqual(["status", undefined]);
    expect(gets[1]!.at - gets[0]!.at).toBeGreaterThanOrEqual(950);
  });

  // wire: retry-after
  it("a 429 is retried and a 400 is not", async () => {
    await started;
    const job = await new Sluice({ url: server.url }).queue(freshQueue()).submit({ x: 1 });
    const proxy = await proxyTo(server.url);
    const client = new Sluice({ url: proxy.url });
    proxy.addFault({ path: "^/v1/jobs/", method: "GET", action: "status", status: 429, retryAfter: "0" });
    expect((await client.jobs.get(job.id)).id).toBe(job.id);
    proxy.addFault({ path: "^/v1/jobs/", method: "GET", action: "status", status: 400 });
    await expect(client.jobs.get(job.id)).rejects.toMatchObject({ status: 400 });
    expect(proxy.log().filter((r) => r.method === "GET")).toHaveLength(3);
  });

  // wire: backoff
  it("network failures are retried up to attempts, then the network error is thrown", async () => {
    await started;
    const job = await new Sluice({ url: server.url }).queue(freshQueue()).submit({ x: 1 });
    const proxy = await proxyTo(server.url);
    proxy.addFault({ path: "^/v1/jobs/", method: "GET", action: "reset", times: 2 });
    expect((await new Sluice({ url: proxy.url, backoff: { baseMs: 50, capMs: 1000 } }).jobs.get(job.id)).id).toBe(job.id);
    proxy.addFault({ path: "^/v1/jobs/", method: "GET", action: "reset", times: 3 });
    await expect(new Sluice({ url: proxy.url, attempts: 3, backoff: { baseMs: 50, capMs: 1000 } }).jobs.get(job.id)).rejects.toBeInstanceOf(SluiceNetworkError);
    expect(proxy.log().filter((r) => r.method === "GET")).toHaveLength(6);
  });

  // wire: idempotency-key
  it("a lost submit answer is resent with its key and gives the same job", async () => {
    await started;
    const queue = freshQueue();
    const proxy = await proxyTo(server.url);
    proxy.addFault({ path: submitPath, method: "POST", action: "drop-answer" });
    const job = await new Sluice({ url: proxy.url, backoff: { baseMs: 50, capMs: 500 } }).queue(queue).submit({ prompt: "p" });
    const submits = proxy.log().filter((r) => r.method === "POST");
    expect(submits.map((r) => r.fault)).toEqual(["drop-answer", undefined]);
    expect(new Set(submits.map((r) => r.idempotencyKey))).toEqual(new Set([job.job.idempotencyKey]));
    expect(job.replayed).toBe(true);
    expect(await queuedJobs(server, queue)).toBe(1);
  });

  // wire: acks
  it("a lost ack answer is reported again through the job's route, which finds it finished", async () => {
    await started;
    const proxy = await proxyTo(server.url);
    const sluice = new Sluice({ url: proxy.url });
    const q = sluice.queue(freshQueue());
    const handle = await q.submit({ n: 1 });
    const errors: unknown[] = [];
    proxy.addFault({ path: "/leases$", method: "POST", body: String.raw`"complete":\[\{`, action: "drop-answer" });
    const worker = q.work(async () => "done", { onError: (err) => errors.push(err) });
    const done = await handle.wait({ timeoutMs: 20_000 });
    await waitFor(() => proxy.log().some((r) => r.path.endsWith("/complete")), { what: "the complete route" });
    await worker.close();
    expect(done).toMatchObject({ status: "succeeded", output: "done", attempt: 1 });
    expect(errors.map((e) => (e as SluiceApiError).code)).toEqual(["JobAlreadyFinished"]);
  });

  // wire: heartbeats
  it("heartbeats ride out transient failures", async () => {
    await started;
    const proxy = await proxyTo(server.url);
    const q = new Sluice({ url: proxy.url }).queue(freshQueue());
    const handle = await q.submit({});
    proxy.addFault({ path: "/heartbeat$", action: "status", status: 503, retryAfter: "0", times: 2 });
    const slow = (): Promise<string> => new Promise((resolve) => setTimeout(() => resolve("done"), 3000));
    const worker = q.work(slow, { leaseSeconds: 2, onError: () => {} });
    expect(await handle.wait({ timeoutMs: 20_000 })).toMatchObject({ status: "succeeded", attempt: 1 });
    await worker.close();
    const beats = proxy.log().filter((r) => r.path.endsWith("/heartbeat"));
    expect(beats.slice(0, 2).map((r) => r.fault)).toEqual(["status", "status"]);
    expect(beats.length).toBeGreaterThanOrEqual(3);
  });
});

describe("across a server kill", () => {
  // wire: idempotency-key
  it("an idempotent resend across a SIGKILL and restart of the server gives the same job", async () => {
    const dataDir = await makeTempDir("sluice-ts-faults-");
    const first = await spawnCli({ dataDir });
    const proxy = await proxyTo(first.url);
    // The first submit is applied (the server answered) and its answer lost; every resend is cut
    // off until the server has been killed with SIGKILL and started again on the same data.
    proxy.addFault({ path: submitPath, method: "POST", action: "drop-answer" });
    proxy.addFault({ path: submitPath, method: "POST", action: "reset", times: 10_000 });
    const restarted = (async () => {
      await waitFor(() => proxy.log().some((r) => r.fault === "drop-answer" && r.upstreamStatus === 201), { timeoutMs: 20_000, what: "the dropped answer" });
      first.child.kill("SIGKILL");
      await first.exited;
      const second = await spawnCli({ dataDir, port: first.port });
      proxy.clearFaults();
      return second;
    })();
    const queue = freshQueue();
    const job = await new Sluice({ url: proxy.url, attempts: 1000, backoff: { baseMs: 50, capMs: 200 } }).queue(queue).submit({ prompt: "survives" });
    const second = await restarted;
    const submits = proxy.log().filter((r) => r.method === "POST");
    expect(submits.length).toBeGreaterThanOrEqual(3);
    expect(submits.at(-1)!.fault).toBeUndefined();
    expect(new Set(submits.map((r) => r.idempotencyKey))).toEqual(new Set([job.job.idempotencyKey]));
    expect(job.replayed).toBe(true);
    expect(await queuedJobs(second, queue)).toBe(1);
  }, 60_000);
});
