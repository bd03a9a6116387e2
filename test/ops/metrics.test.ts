/**
 * GET /metrics: the Prometheus text format promtool accepts, the numbers each metric reports after
 * real SQS and jobs traffic, bounded queue labels, and the `read` scope once credentials exist;
 * two accounts' queues of one name as two series, and another account's token seeing its own.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/index.js";
import { type RunningServer, createLogger, startServer } from "../../src/server/index.js";
import { sample } from "../support/metrics-text.js";
import { promtool } from "../support/promtool.js";
import { sqsRequest } from "../support/sqs-json.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

const quiet = createLogger({ level: "silent" });

const sqs = async (url: string, action: string, body: unknown): Promise<Record<string, unknown>> => (await sqsRequest(url, action, body)).json;

async function scrape(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return res.text();
}

describe("GET /metrics", () => {
  let server: RunningServer | undefined;
  const receivers: Array<{ close(): void }> = [];
  afterEach(async () => {
    await server?.close();
    server = undefined;
    for (const r of receivers.splice(0)) r.close();
    await removeTempDirs();
  });

  it("reports queue depth, traffic, jobs, requests and webhooks, in a format promtool accepts", async () => {
    const hooks: string[] = [];
    const receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        hooks.push(req.headers["webhook-id"] as string);
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    receivers.push(receiver);
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const t0 = Date.now();
    const clock = new ManualClock(t0);
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-metrics-"), clock, webhookAllowPrivate: true, logger: quiet });
    const url = server.url;

    // SQS: 3 sent (one delayed), 2 received, 1 deleted, 1 dead-lettered on its second receive.
    await sqs(url, "CreateQueue", { QueueName: "orders-dlq" });
    const queueUrl = (await sqs(url, "CreateQueue", {
      QueueName: "orders",
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: "arn:aws:sqs:us-east-1:000000000000:orders-dlq", maxReceiveCount: 1 }) },
    })).QueueUrl as string;
    await sqs(url, "SendMessageBatch", {
      QueueUrl: queueUrl,
      Entries: [
        { Id: "a", MessageBody: "a" },
        { Id: "b", MessageBody: "b" },
        { Id: "c", MessageBody: "c", DelaySeconds: 60 },
      ],
    });
    const received = (await sqs(url, "ReceiveMessage", { QueueUrl: queueUrl, MaxNumberOfMessages: 10 })).Messages as Array<{ ReceiptHandle: string }>;
    expect(received).toHaveLength(2);
    await sqs(url, "DeleteMessage", { QueueUrl: queueUrl, ReceiptHandle: received[0]!.ReceiptHandle });
    await sqs(url, "ChangeMessageVisibility", { QueueUrl: queueUrl, ReceiptHandle: received[1]!.ReceiptHandle, VisibilityTimeout: 0 });
    expect((await sqs(url, "ReceiveMessage", { QueueUrl: queueUrl })).Messages ?? []).toHaveLength(0);
    await sqs(url, "GetQueueUrl", { QueueName: "no-such-queue" });

    // Jobs: 4 submitted over HTTP; one succeeds (with a webhook), one is retried, one fails, one is canceled.
    const submit = async (body: unknown): Promise<string> => {
      const res = await fetch(`${url}/v1/queues/embed/jobs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      return ((await res.json()) as { job: { id: string } }).job.id;
    };
    for (const body of [{ input: 1, webhook: { url: hookUrl, events: ["job.succeeded"] } }, { input: 2 }, { input: 3 }]) await submit(body);
    clock.advance(2_000);
    const leased = await server.jobs.lease("", "embed", { max: 3 });
    expect(leased).toHaveLength(3);
    const [first, second, third] = [...leased].sort((x, y) => Number(x.inputJson) - Number(y.inputJson));
    clock.advance(500);
    await server.jobs.complete("", first!.id, { leaseId: first!.leaseToken, output: "ok" });
    await server.jobs.fail("", second!.id, { leaseId: second!.leaseToken, error: { message: "try again" } });
    await server.jobs.fail("", third!.id, { leaseId: third!.leaseToken, error: { message: "bad input" }, retryable: false });
    const canceled = await submit({ input: 4 });
    expect((await fetch(`${url}/v1/jobs/${canceled}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await fetch(`${url}/v1/jobs/no-such-job`)).status).toBe(404);
    await waitFor(() => hooks.length === 1, { what: "the webhook delivery" });
    clock.advance(5_000);

    const text = await waitFor(async () => {
      const t = await scrape(url);
      return sample(t, "sluice_webhook_deliveries_total", { outcome: "delivered" }) === 1 ? t : undefined;
    }, { what: "the delivery to be counted" });
    const check = await promtool(["check", "metrics"], text);
    expect(check.output).toBe("");
    expect(check.code).toBe(0);
    expect(text).toContain("# TYPE sluice_event_loop_lag_seconds histogram");
    expect(sample(text, "sluice_event_loop_lag_seconds_bucket", { le: "+Inf" })).toBe(sample(text, "sluice_event_loop_lag_seconds_count"));

    expect(sample(text, "sluice_queue_messages", { queue: "orders", state: "visible" })).toBe(0);
    expect(sample(text, "sluice_queue_messages", { queue: "orders", state: "delayed" })).toBe(1);
    expect(sample(text, "sluice_queue_messages", { queue: "orders", state: "in_flight" })).toBe(0);
    expect(sample(text, "sluice_queue_messages", { queue: "orders-dlq", state: "visible" })).toBe(1);
    expect(sample(text, "sluice_queue_dlq_messages", { queue: "orders" })).toBe(1);
    expect(sample(text, "sluice_queue_dlq_messages", { queue: "orders-dlq" })).toBeUndefined();
    expect(sample(text, "sluice_queue_messages_sent_total", { queue: "orders" })).toBe(3);
    expect(sample(text, "sluice_queue_messages_received_total", { queue: "orders" })).toBe(2);
    expect(sample(text, "sluice_queue_messages_deleted_total", { queue: "orders" })).toBe(1);
    expect(sample(text, "sluice_queue_messages_dead_lettered_total", { queue: "orders" })).toBe(1);
    // The retried job is visible again after its backoff: queued, its message delayed or visible.
    const embedVisible = sample(text, "sluice_queue_messages", { queue: "embed", state: "visible" })!;
    const embedDelayed = sample(text, "sluice_queue_messages", { queue: "embed", state: "delayed" })!;
    expect(embedVisible + embedDelayed).toBe(1);
    expect(sample(text, "sluice_queue_messages", { queue: "embed-dlq", state: "visible" })).toBe(1);
    expect(sample(text, "sluice_queue_oldest_message_age_seconds", { queue: "orders-dlq" })).toBeGreaterThan(0);
    expect(sample(text, "sluice_queues")).toBe(4);

    for (const [outcome, n] of Object.entries({ submitted: 4, succeeded: 1, retried: 1, failed: 1, canceled: 1 })) {
      expect(sample(text, "sluice_jobs_total", { queue: "embed", outcome }), outcome).toBe(n);
    }
    expect(sample(text, "sluice_job_run_seconds_count", { queue: "embed" })).toBe(3);
    expect(sample(text, "sluice_job_run_seconds_sum", { queue: "embed" })).toBeCloseTo(1.5, 6);
    expect(sample(text, "sluice_job_queue_wait_seconds_count", { queue: "embed" })).toBe(3);
    expect(sample(text, "sluice_job_queue_wait_seconds_sum", { queue: "embed" })).toBeCloseTo(6, 6);

    expect(sample(text, "sluice_requests_total", { protocol: "sqs_json", action: "SendMessageBatch", code: "OK" })).toBe(1);
    expect(sample(text, "sluice_requests_total", { protocol: "sqs_json", action: "GetQueueUrl", code: "QueueDoesNotExist" })).toBe(1);
    expect(sample(text, "sluice_requests_total", { protocol: "jobs", action: "POST /v1/queues/:queue/jobs", code: "OK" })).toBe(4);
    expect(sample(text, "sluice_requests_total", { protocol: "jobs", action: "GET /v1/jobs/:id", code: "JobNotFound" })).toBe(1);
    expect(sample(text, "sluice_request_duration_seconds_count", { protocol: "sqs_json", action: "ReceiveMessage" })).toBe(2);
    expect(text).toMatch(/^sluice_build_info\{version="\d+\.\d+\.\d+[^"]*"\} 1$/m);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    const commits = sample(text, "sluice_store_commits_total")!;
    expect(commits).toBeGreaterThan(10);
    expect(sample(text, "sluice_store_commit_seconds_count")).toBe(commits);
    expect(sample(text, "sluice_store_commit_writes_count")).toBe(commits);
    expect(sample(text, "sluice_store_commit_writes_sum")).toBeGreaterThanOrEqual(commits);
    expect(sample(text, "sluice_store_fsync_seconds_count")).toBeGreaterThan(0);
    // No id of any kind is a label.
    expect(text).not.toContain(first!.id);
    expect(text).not.toContain(received[0]!.ReceiptHandle);
  });

  it("agrees with GET /v1/queues/{queue}, which reads depth as cheaply (the head of the queue included)", async () => {
    const t0 = Date.now();
    const clock = new ManualClock(t0);
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-metrics-"), clock, logger: quiet });
    const queueUrl = (await sqs(server.url, "CreateQueue", { QueueName: "head" })).QueueUrl as string;
    await sqs(server.url, "SendMessage", { QueueUrl: queueUrl, MessageBody: "first" });
    clock.advance(1_000);
    await sqs(server.url, "SendMessage", { QueueUrl: queueUrl, MessageBody: "second" });
    const [first] = (await sqs(server.url, "ReceiveMessage", { QueueUrl: queueUrl, VisibilityTimeout: 1 })).Messages as Array<{ Body: string }>;
    expect(first!.Body).toBe("first");
    // "first" is visible again from t0 + 2 s, behind "second" (visible since t0 + 1 s): the head
    // of the queue is "second", 5 s old, though "first" was sent a second before it.
    clock.advance(5_000);
    const text = await scrape(server.url);
    const { stats } = ((await (await fetch(`${server.url}/v1/queues/head`)).json()) as { queue: { stats: { messages: Record<string, number>; oldestVisibleAgeSeconds: number } } }).queue;
    expect(stats.messages).toEqual({ visible: 2, inFlight: 0, delayed: 0 });
    expect(sample(text, "sluice_queue_messages", { queue: "head", state: "visible" })).toBe(2);
    expect(sample(text, "sluice_queue_oldest_message_age_seconds", { queue: "head" })).toBe(5);
    expect(stats.oldestVisibleAgeSeconds).toBe(5);
  });

  it("sums the queues past the label limit under one label", async () => {
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-metrics-"), metricsQueueLimit: 2, logger: quiet });
    for (const name of ["a", "b", "c", "d", "e"]) {
      const queueUrl = (await sqs(server.url, "CreateQueue", { QueueName: name })).QueueUrl as string;
      await sqs(server.url, "SendMessage", { QueueUrl: queueUrl, MessageBody: name });
    }
    const text = await scrape(server.url);
    expect((await promtool(["check", "metrics"], text)).code).toBe(0);
    expect(sample(text, "sluice_queue_messages", { queue: "a", state: "visible" })).toBe(1);
    expect(sample(text, "sluice_queue_messages", { queue: "b", state: "visible" })).toBe(1);
    expect(sample(text, "sluice_queue_messages", { queue: "c", state: "visible" })).toBeUndefined();
    expect(sample(text, "sluice_queue_messages", { queue: "(other)", state: "visible" })).toBe(3);
    expect(sample(text, "sluice_queue_messages_sent_total", { queue: "(other)" })).toBe(3);
    expect(sample(text, "sluice_metrics_queues_unlabelled")).toBe(3);
    expect(new Set([...text.matchAll(/queue="([^"]*)"/g)].map((m) => m[1]))).toEqual(new Set(["a", "b", "(other)"]));
  });

  it("needs the read scope once credentials are configured", async () => {
    const dataDir = await makeTempDir("sluice-metrics-");
    const credentialsFile = join(dataDir, "credentials.json");
    const reader = "metrics-reader-token-0123456789abcdef";
    const submitter = "job-submitter-token-0123456789abcdef";
    await writeFile(credentialsFile, JSON.stringify({ tokens: [{ name: "prometheus", token: reader, scopes: ["read"] }, { name: "api", token: submitter, scopes: ["submit"] }] }));
    server = await startServer({ port: 0, dataDir, credentialsFile, logger: quiet });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${submitter}` } })).status).toBe(403);
    expect(sample(await scrape(server.url, { authorization: `Bearer ${reader}` }), "sluice_queues")).toBe(0);
  });

  it("keeps two accounts' queues of one name apart by `account`, and shows another account only its own series", async () => {
    const dataDir = await makeTempDir("sluice-metrics-");
    const credentialsFile = join(dataDir, "credentials.json");
    const own = "metrics-own-token-0123456789abcdef";
    const other = "metrics-other-token-0123456789abcdef";
    await writeFile(
      credentialsFile,
      JSON.stringify({ tokens: [{ name: "own", token: own, accountId: "111111111111" }, { name: "tenant", token: other, accountId: "222222222222" }] }),
    );
    server = await startServer({ port: 0, dataDir, credentialsFile, accountId: "111111111111", logger: quiet });
    const submit = (token: string, n: number): Promise<Response> =>
      fetch(`${server!.url}/v1/queues/orders/jobs`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ input: n }) });
    for (const n of [1, 2, 3]) expect((await submit(own, n)).status).toBe(201);
    expect((await submit(other, 4)).status).toBe(201);

    const all = await scrape(server.url, { authorization: `Bearer ${own}` });
    expect((await promtool(["check", "metrics"], all)).code).toBe(0);
    expect(sample(all, "sluice_queue_messages", { account: "111111111111", queue: "orders", state: "visible" })).toBe(3);
    expect(sample(all, "sluice_queue_messages", { account: "222222222222", queue: "orders", state: "visible" })).toBe(1);
    expect(sample(all, "sluice_jobs_total", { account: "111111111111", queue: "orders", outcome: "submitted" })).toBe(3);
    expect(sample(all, "sluice_jobs_total", { account: "222222222222", queue: "orders", outcome: "submitted" })).toBe(1);
    expect(sample(all, "sluice_queues")).toBe(4);

    const theirs = await scrape(server.url, { authorization: `Bearer ${other}` });
    expect((await promtool(["check", "metrics"], theirs)).code).toBe(0);
    expect(sample(theirs, "sluice_queue_messages", { account: "222222222222", queue: "orders", state: "visible" })).toBe(1);
    expect(sample(theirs, "sluice_jobs_total", { account: "222222222222", queue: "orders", outcome: "submitted" })).toBe(1);
    expect(theirs).not.toContain("111111111111");
    for (const serverWide of ["sluice_queues ", "sluice_requests_total", "process_", "nodejs_", "sluice_build_info"]) expect(theirs).not.toContain(serverWide);
  });
});
