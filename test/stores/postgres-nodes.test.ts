/**
 * Several Sluice servers on one PostgreSQL database, as nodes behind a load balancer: what one
 * node writes wakes the others' waiters through LISTEN/NOTIFY — a long poll on A is answered by a
 * send on B, long before its own timer; a queue attribute set through A is what B answers and
 * works by; a job's `?wait` on A ends when a worker on C completes it;
 * an event stream on B sees, in order, a job's events written through A and C.
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { openEventStream } from "../jobs/http-harness.js";
import { sqsV3 } from "../support/clients.js";
import { usePostgresDatabase } from "../support/postgres.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

const database = usePostgresDatabase();
const nodes: RunningServer[] = [];
const clients: SQSClient[] = [];

beforeAll(async () => {
  for (let i = 0; i < 3; i++) {
    nodes.push(await startServer({ host: "127.0.0.1", port: 0, dataDir: await makeTempDir("sluice-node-"), store: "postgres", postgresUrl: database.url, logLevel: "warn" }));
  }
  for (const node of nodes) clients.push(sqsV3(node.url));
});

afterAll(async () => {
  for (const c of clients) c.destroy();
  await Promise.all(nodes.map((n) => n.close()));
  await removeTempDirs();
});

describe("Sluice nodes on one PostgreSQL database", () => {
  it("a long poll on node A is answered by a send on node B, not by its timer", async () => {
    const [a, b] = clients as [SQSClient, SQSClient];
    const created = await fetch(`${nodes[0]!.url}/v1/queues/wakeup`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" });
    expect(created.ok).toBe(true);
    const urlOn = (i: number): string => `${nodes[i]!.url}/000000000000/wakeup`;
    const latencies: number[] = [];
    for (let round = 0; round < 5; round++) {
      const polled = a.send(new ReceiveMessageCommand({ QueueUrl: urlOn(0), WaitTimeSeconds: 20, MaxNumberOfMessages: 1 }));
      // The poll has reached its wait (its first receive found nothing).
      await waitFor(() => nodes[0]!.queues.waiters.waiterCount() > 0, { what: "node A's long poll waiting" });
      await b.send(new SendMessageCommand({ QueueUrl: urlOn(1), MessageBody: `wake-${round}` }));
      const sentAt = performance.now();
      const res = await polled;
      latencies.push(performance.now() - sentAt);
      expect(res.Messages?.map((m) => m.Body)).toEqual([`wake-${round}`]);
    }
    // Woken by the notice: far inside the poll's 20 s (the latencies are reported by the closing note).
    console.log(`cross-node long-poll wake-up after the send was acknowledged, ms: ${latencies.map((l) => l.toFixed(1)).join(", ")}`);
    expect(Math.max(...latencies)).toBeLessThan(5_000);
  });

  it("a queue attribute set through node A is what node B answers and works by, once A's notice reaches it", async () => {
    const [a, b] = clients as [SQSClient, SQSClient];
    const { QueueUrl } = await a.send(new CreateQueueCommand({ QueueName: "attrs" }));
    const urlOn = (i: number): string => `${nodes[i]!.url}/000000000000/attrs`;
    const visibilityOn = async (client: SQSClient, i: number): Promise<string | undefined> =>
      (await client.send(new GetQueueAttributesCommand({ QueueUrl: urlOn(i), AttributeNames: ["VisibilityTimeout"] }))).Attributes?.VisibilityTimeout;
    expect(QueueUrl).toBeDefined();
    // B reads (and keeps) the queue's record first.
    expect(await visibilityOn(b, 1)).toBe("30");
    await a.send(new SetQueueAttributesCommand({ QueueUrl: urlOn(0), Attributes: { VisibilityTimeout: "0" } }));
    await waitFor(async () => (await visibilityOn(b, 1)) === "0", { what: "node B to see the attribute set through A" });
    // And B's receives use it: with a visibility timeout of 0, a received message is visible again at once.
    await b.send(new SendMessageCommand({ QueueUrl: urlOn(1), MessageBody: "again" }));
    const first = await b.send(new ReceiveMessageCommand({ QueueUrl: urlOn(1), MaxNumberOfMessages: 1 }));
    const second = await b.send(new ReceiveMessageCommand({ QueueUrl: urlOn(1), MaxNumberOfMessages: 1 }));
    expect([first.Messages?.[0]?.Body, second.Messages?.[0]?.Body]).toEqual(["again", "again"]);
  });

  it("a job's ?wait on node A returns when a worker on node C completes it", async () => {
    const [nodeA, , nodeC] = nodes as [RunningServer, RunningServer, RunningServer];
    const submitted = await fetch(`${nodeA.url}/v1/queues/work/jobs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input: { n: 1 } }) });
    expect(submitted.status).toBe(201);
    const { job } = (await submitted.json()) as { job: { id: string } };
    const waited = fetch(`${nodeA.url}/v1/jobs/${job.id}?wait=30`).then(async (r) => ({ at: performance.now(), body: (await r.json()) as { job: { status: string; output: unknown } } }));
    const leased = await fetch(`${nodeC.url}/v1/queues/work/leases`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ max: 1, waitSeconds: 5, leaseSeconds: 30 }) });
    const { jobs } = (await leased.json()) as { jobs: Array<{ id: string; leaseId: string }> };
    expect(jobs.map((j) => j.id)).toEqual([job.id]);
    const completed = await fetch(`${nodeC.url}/v1/jobs/${job.id}/complete`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ leaseId: jobs[0]!.leaseId, output: { ok: true } }) });
    expect(completed.status).toBe(200);
    const completedAt = performance.now();
    const { at, body } = await waited;
    expect(body.job).toMatchObject({ status: "succeeded", output: { ok: true } });
    console.log(`cross-node ?wait answered ${(at - completedAt).toFixed(1)} ms after the completion was acknowledged`);
    expect(at - completedAt).toBeLessThan(5_000);
  });

  it("event streams on node B see a job's events from A and C in order, ending with the terminal one", async () => {
    const [nodeA, nodeB, nodeC] = nodes as [RunningServer, RunningServer, RunningServer];
    const post = async (node: RunningServer, path: string, body: unknown): Promise<Response> => {
      const res = await fetch(`${node.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBeLessThan(300);
      return res;
    };
    const order = ["job.queued", "job.started", "job.progress", "job.progress", "job.progress", "job.succeeded"];
    type Seen = { event: string; status: string; progress: number | null };
    const readUntilSucceeded = async (stream: Awaited<ReturnType<typeof openEventStream>>): Promise<Seen[]> => {
      const seen: Seen[] = [];
      for (let e = await stream.next(); e !== undefined; e = await stream.next()) {
        const job = (e.data as { job: { status: string; progress: number | null } }).job;
        seen.push({ event: e.event, status: job.status, progress: job.progress });
        if (e.event === "job.succeeded") break;
      }
      stream.close();
      return seen;
    };
    const counts: number[] = [];
    for (let round = 0; round < 3; round++) {
      const queue = `streamed-${round}`;
      // Subscribed once the response has begun (the stream subscribes before its first byte).
      const queueStream = await openEventStream(`${nodeB.url}/v1/events?queue=${queue}`);
      const { job } = (await (await post(nodeA, `/v1/queues/${queue}/jobs`, { input: { round } })).json()) as { job: { id: string } };
      const jobStream = await openEventStream(`${nodeB.url}/v1/jobs/${job.id}/events`);
      expect((await jobStream.next())?.event).toBe("job.snapshot");
      const leased = (await (await post(nodeC, `/v1/queues/${queue}/leases`, { max: 1, waitSeconds: 5, leaseSeconds: 30 })).json()) as { jobs: Array<{ leaseId: string }> };
      const leaseId = leased.jobs[0]!.leaseId;
      // Each change acknowledged before the next, through alternating nodes and without waiting
      // for B: B hears of them on two connections, several at once, and reads the job for each.
      for (const [i, node] of [nodeA, nodeC, nodeA].entries()) await post(node, `/v1/jobs/${job.id}/heartbeat`, { leaseId, progress: (i + 1) / 4 });
      await post(nodeC, `/v1/jobs/${job.id}/complete`, { leaseId, output: { round } });
      for (const seen of [await readUntilSucceeded(queueStream), await readUntilSucceeded(jobStream)]) {
        // In order: a notice that arrives after a later one's is dropped, never told out of turn;
        // each record read is at least as new as its event, and no older than the one before.
        const events = seen.map((s) => s.event);
        let at = 0;
        for (const event of events) {
          at = order.indexOf(event, at) + 1;
          expect(at, `${events.join(", ")} is not in the order ${order.join(", ")}`).toBeGreaterThan(0);
        }
        expect(events.at(-1)).toBe("job.succeeded");
        expect(seen.at(-1)?.status).toBe("succeeded");
        const progress = seen.map((s) => s.progress ?? 0);
        expect(progress).toEqual([...progress].sort((x, y) => x - y));
        counts.push(events.filter((e) => e !== "job.snapshot").length);
      }
    }
    console.log(`events seen by node B's streams (of 6 on a queue stream, 5 or 6 on a job stream): ${counts.join(", ")}`);
  });
});
