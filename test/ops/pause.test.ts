/**
 * Pausing a queue (docs/operations.md, "Pausing a queue") through the real clients: while paused,
 * SQS ReceiveMessage (@aws-sdk/client-sqs) and job leases return nothing, a long poll waits and is
 * answered when the queue resumes, sends and submits go on, a worker's completes still land; the
 * CLI, /metrics and the declarative config see it; on PostgreSQL a pause made through one node
 * holds every node's leases, and a resume there answers a lease waiting on another.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { killAllChildren, runCliToExit } from "../support/cli.js";
import { sqsV3 } from "../support/clients.js";
import { sample } from "../support/metrics-text.js";
import { usePostgresDatabase } from "../support/postgres.js";
import { startPostgresNodes } from "../support/postgres-nodes.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

const database = usePostgresDatabase();
const servers: RunningServer[] = [];
let sqlite: RunningServer;
let sqs: SQSClient;

/** What these tests read of the jobs API's answers. */
interface Answer {
  queue: { paused: boolean };
  job: { id: string; status: string };
  jobs: Array<{ id: string; leaseId: string }>;
  results: unknown[];
}

async function api(server: RunningServer, method: string, path: string, body?: unknown): Promise<{ status: number; body: Answer }> {
  const res = await fetch(`${server.url}${path}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, body: (await res.json()) as Answer };
}

const waitingOn = (server: RunningServer, n = 1) => waitFor(() => server.queues.waiters.waiterCount() >= n, { what: "a long poll waiting" });

beforeAll(async () => {
  const dir = await makeTempDir("sluice-pause-");
  const configFile = join(dir, "sluice.toml");
  await writeFile(configFile, '[queues.held]\npaused = true\n\n[queues.open]\n');
  sqlite = await startServer({ host: "127.0.0.1", port: 0, dataDir: dir, logLevel: "warn", configFile });
  servers.push(sqlite);
  sqs = sqsV3(sqlite.url);
});
afterAll(async () => {
  sqs?.destroy();
  await killAllChildren();
  await Promise.all(servers.map((s) => s.close()));
  await removeTempDirs();
});

describe("a paused queue", () => {
  it("answers SQS receives with nothing while sends go on, and a long poll waiting across the pause gets the message on resume", async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "pics" }));
    expect((await api(sqlite, "PUT", "/v1/queues/pics", { paused: true })).body.queue.paused).toBe(true);
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "cat.png" }));
    expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 0 }))).Messages).toBeUndefined();
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["ApproximateNumberOfMessages"] }));
    expect(Attributes?.ApproximateNumberOfMessages).toBe("1");
    const polled = sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20 }));
    await waitingOn(sqlite);
    expect((await api(sqlite, "PUT", "/v1/queues/pics", { paused: false })).body.queue.paused).toBe(false);
    expect((await polled).Messages?.map((m) => m.Body)).toEqual(["cat.png"]);
  });

  it("holds a long poll that began before the pause: a send during the pause wakes it, but it receives only on resume", async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "early" }));
    const polled = sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20, MessageSystemAttributeNames: ["ApproximateFirstReceiveTimestamp"] }));
    await waitingOn(sqlite);
    await api(sqlite, "PUT", "/v1/queues/early", { paused: true });
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "during the pause" }));
    // Woken by the send, the poll looked, found the queue paused, and waits again.
    await waitingOn(sqlite);
    const resumedAtMs = Date.now();
    await api(sqlite, "PUT", "/v1/queues/early", { paused: false });
    const [message] = (await polled).Messages ?? [];
    expect(message?.Body).toBe("during the pause");
    expect(Number(message?.Attributes?.ApproximateFirstReceiveTimestamp)).toBeGreaterThanOrEqual(resumedAtMs);
  });

  it("holds a lease that began before the pause: a submit during the pause is leased only on resume", async () => {
    await api(sqlite, "PUT", "/v1/queues/early-jobs", {});
    const waiting = api(sqlite, "POST", "/v1/queues/early-jobs/leases", { max: 1, waitSeconds: 20 });
    await waitingOn(sqlite);
    await api(sqlite, "PUT", "/v1/queues/early-jobs", { paused: true });
    const job = (await api(sqlite, "POST", "/v1/queues/early-jobs/jobs", { input: { n: 1 } })).body.job;
    await waitingOn(sqlite);
    expect((await api(sqlite, "GET", `/v1/jobs/${job.id}`)).body.job.status).toBe("queued");
    await api(sqlite, "PUT", "/v1/queues/early-jobs", { paused: false });
    expect((await waiting).body.jobs.map((j) => j.id)).toEqual([job.id]);
  });

  it("takes submits but leases nothing until resumed; a lease's completes still land while paused", async () => {
    const first = (await api(sqlite, "POST", "/v1/queues/gpu/jobs", { input: { n: 1 } })).body.job;
    const running = (await api(sqlite, "POST", "/v1/queues/gpu/leases", { max: 1 })).body.jobs[0]!;
    expect(running.id).toBe(first.id);
    await api(sqlite, "PUT", "/v1/queues/gpu", { paused: true });
    const second = await api(sqlite, "POST", "/v1/queues/gpu/jobs", { input: { n: 2 } });
    expect(second.status).toBe(201);
    // A worker's report with its next lease: the complete lands, no new job is handed out.
    const report = await api(sqlite, "POST", "/v1/queues/gpu/leases", { max: 1, complete: [{ id: first.id, leaseId: running.leaseId, output: "done" }] });
    expect(report.body).toMatchObject({ jobs: [], results: [{ id: first.id, ok: true }] });
    expect((await api(sqlite, "GET", `/v1/jobs/${first.id}`)).body.job.status).toBe("succeeded");
    expect((await api(sqlite, "POST", "/v1/queues/gpu/leases", { max: 1 })).body.jobs).toEqual([]);
    const waiting = api(sqlite, "POST", "/v1/queues/gpu/leases", { max: 1, waitSeconds: 20 });
    await waitingOn(sqlite);
    const metrics = await (await fetch(`${sqlite.url}/metrics`)).text();
    expect(sample(metrics, "sluice_queue_paused", { account: "000000000000", queue: "gpu" })).toBe(1);
    expect(sample(metrics, "sluice_queue_paused", { account: "000000000000", queue: "pics" })).toBe(0);
    await api(sqlite, "PUT", "/v1/queues/gpu", { paused: false });
    expect((await waiting).body.jobs.map((j: { id: string }) => j.id)).toEqual([second.body.job.id]);
  });

  it("is paused and resumed by `sluice queues pause|resume`", async () => {
    // Piped, the CLI prints JSON.
    const paused = await runCliToExit(["queues", "pause", "cli-q", "--url", sqlite.url]);
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout).queue).toMatchObject({ name: "cli-q", paused: true });
    expect((await api(sqlite, "GET", "/v1/queues/cli-q")).body.queue.paused).toBe(true);
    const resumed = await runCliToExit(["queues", "resume", "cli-q", "--url", sqlite.url, "--json"]);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout).queue.paused).toBe(false);
  });

  it("is declared by the config file, and exported as declared", async () => {
    expect((await api(sqlite, "GET", "/v1/queues/held")).body.queue.paused).toBe(true);
    expect((await api(sqlite, "GET", "/v1/queues/open")).body.queue.paused).toBe(false);
    const exported = (await (await fetch(`${sqlite.url}/v1/config?format=json`)).json()) as { queues: Record<string, unknown> };
    expect(exported.queues.held).toEqual({ paused: true });
    expect(exported.queues.open).toEqual({});
  });
});

describe("a paused queue on PostgreSQL nodes", () => {
  it("paused through node A leases nothing on node B, and a lease waiting on B is answered when A resumes it", async () => {
    const [a, b] = (await startPostgresNodes(2, database.url)) as [RunningServer, RunningServer];
    const job = (await api(a, "POST", "/v1/queues/render/jobs", { input: { frame: 7 } })).body.job;
    await api(a, "PUT", "/v1/queues/render", { paused: true });
    expect((await api(b, "GET", "/v1/queues/render")).body.queue.paused).toBe(true);
    expect((await api(b, "POST", "/v1/queues/render/leases", { max: 1 })).body.jobs).toEqual([]);
    const waiting = api(b, "POST", "/v1/queues/render/leases", { max: 1, waitSeconds: 20 });
    await waitingOn(b);
    await api(a, "PUT", "/v1/queues/render", { paused: false });
    expect((await waiting).body.jobs.map((j: { id: string }) => j.id)).toEqual([job.id]);
  });
});
