/**
 * Three `sluice serve --store postgres` processes on one database, as nodes behind a load
 * balancer, under load from real clients (SDK v3 producers and consumers of a standard and a FIFO
 * queue, HTTP job submitters and workers, an event stream): one node is killed with SIGKILL
 * mid-load and restarted on its port. Then no acknowledged send is lost, no acknowledged delete
 * comes back, each FIFO group is delivered in order without duplicates, every job finishes exactly
 * once, and the event stream on a surviving node saw the jobs finish.
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { Agent, request } from "node:http";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type Json, openEventStream } from "../jobs/http-harness.js";
import { type CliServer, killAllChildren, spawnCli } from "../support/cli.js";
import { sqsV3 } from "../support/clients.js";
import { usePostgresDatabase } from "../support/postgres.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor, within } from "../support/wait.js";

const database = usePostgresDatabase();
/** Long enough that a live consumer always deletes within it; what a dead node leased reappears after it. */
const visibilitySeconds = 10;
const fifoGroups = 6;

/** One node: its process, and clients that are made anew when it restarts (old sockets die with it). */
interface Node {
  name: string;
  dataDir: string;
  server: CliServer;
  sqs: SQSClient;
  agent: Agent;
  /** Bumped by the restart: a request begun under an older generation may fail. */
  generation: number;
  down: boolean;
}

const nodes: Node[] = [];
/** Requests the kill cut (failed because their node was down or restarted). */
let cutByKill = 0;
/** Requests begun and not yet answered, by node name: the kill waits for one on its node. */
const inFlightOn = new Map<string, number>();

afterEach(async () => {
  await killAllChildren();
  for (const node of nodes.splice(0)) {
    node.sqs.destroy();
    node.agent.destroy();
  }
});
afterAll(removeTempDirs);

async function startNode(name: string, dataDir: string, port?: number): Promise<Pick<Node, "server" | "sqs" | "agent">> {
  const server = await spawnCli({ dataDir, port, extraArgs: ["--store", "postgres", "--postgres-url", database.url], readyTimeoutMs: 60_000 });
  return { server, sqs: sqsV3(server.url), agent: new Agent({ keepAlive: true }) };
}

/**
 * Runs `op` against `node`. A failure while the node is down, or begun before its restart, is the
 * kill's doing (undefined: not acknowledged); any other failure fails the test.
 */
async function onNode<T>(node: Node, op: (node: Node) => Promise<T>): Promise<T | undefined> {
  const generation = node.generation;
  inFlightOn.set(node.name, (inFlightOn.get(node.name) ?? 0) + 1);
  try {
    return await op(node);
  } catch (err) {
    if (node.down || node.generation !== generation) {
      cutByKill++;
      return undefined;
    }
    throw err;
  } finally {
    inFlightOn.set(node.name, inFlightOn.get(node.name)! - 1);
  }
}

/** The first node up, starting from `preferred` (a load balancer skipping a dead backend). */
function liveNode(preferred: number): Node {
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[(preferred + i) % nodes.length]!;
    if (!node.down) return node;
  }
  throw new Error("no node is up");
}

/** A JSON request over the node's own keep-alive agent; resolves with the status and parsed body. */
function http(node: Node, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${node.server.url}${path}`,
      { method, agent: node.agent, headers: { ...(payload ? { "content-type": "application/json" } : {}), ...headers } },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (d: string) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** Per message body: its deliveries' receipt handles, and whether a delete of its latest one was acknowledged. */
class DeliveryLog {
  readonly deliveries = new Map<string, number>();
  private readonly latestHandle = new Map<string, string>();
  private readonly deleted = new Set<string>();
  readonly resurrected: string[] = [];
  readonly unknown: string[] = [];

  constructor(private readonly attempted: Set<string>) {}

  /** Returns whether this is the body's first delivery. */
  delivered(body: string, handle: string): boolean {
    if (this.deleted.has(body)) this.resurrected.push(body);
    if (!this.attempted.has(body)) this.unknown.push(body);
    const n = (this.deliveries.get(body) ?? 0) + 1;
    this.deliveries.set(body, n);
    this.latestHandle.set(body, handle);
    return n === 1;
  }

  /** A delete was acknowledged: the message is gone if the handle was its latest delivery's. */
  deleteAcknowledged(body: string, handle: string): void {
    if (this.latestHandle.get(body) === handle) this.deleted.add(body);
  }

  get duplicates(): number {
    let n = 0;
    for (const count of this.deliveries.values()) n += count - 1;
    return n;
  }
}

async function queueSize(sqs: SQSClient, queueUrl: string): Promise<number> {
  const { Attributes: a } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"] }),
  );
  return Number(a!.ApproximateNumberOfMessages) + Number(a!.ApproximateNumberOfMessagesNotVisible) + Number(a!.ApproximateNumberOfMessagesDelayed);
}

describe("three nodes on one PostgreSQL, one killed with SIGKILL under load", () => {
  it("loses no acknowledged send, resurrects no delete, keeps FIFO order, finishes each job once", { timeout: 300_000 }, async () => {
    for (const name of ["A", "B", "C"]) {
      const dataDir = await makeTempDir(`sluice-node-${name}-`);
      nodes.push({ name, dataDir, ...(await startNode(name, dataDir)), generation: 1, down: false });
    }
    const [nodeA, , nodeC] = nodes as [Node, Node, Node];
    const urlOf = (node: Node, queue: string): string => `${node.server.url}/000000000000/${queue}`;
    await nodeA.sqs.send(new CreateQueueCommand({ QueueName: "std" }));
    await nodeA.sqs.send(new CreateQueueCommand({ QueueName: "orders.fifo", Attributes: { FifoQueue: "true" } }));
    expect((await http(nodeA, "PUT", "/v1/queues/kjobs", {})).status).toBeLessThan(300);

    let producing = true;
    let consuming = true;
    const failures: string[] = [];
    const guard = (what: string, loop: Promise<void>): Promise<void> => loop.catch((err: unknown) => void failures.push(`${what}: ${err instanceof Error ? err.stack : String(err)}`));

    // ---- standard queue: senders (singles and batches, never retried: a send in flight at the
    // kill may or may not exist) and receive+delete consumers, spread over the nodes.
    const stdAttempted = new Set<string>();
    const stdAcked = new Set<string>();
    const std = new DeliveryLog(stdAttempted);
    let stdSeq = 0;
    const stdSender = async (preferred: number): Promise<void> => {
      while (producing) {
        const node = liveNode(preferred);
        const bodies = stdSeq % 2 === 0 ? [`s-${stdSeq++}`] : Array.from({ length: 5 }, () => `s-${stdSeq++}`);
        bodies.forEach((b) => stdAttempted.add(b));
        if (bodies.length === 1) {
          const sent = await onNode(node, (n) => n.sqs.send(new SendMessageCommand({ QueueUrl: urlOf(n, "std"), MessageBody: bodies[0] })));
          if (sent) stdAcked.add(bodies[0]!);
        } else {
          const entries = bodies.map((b, i) => ({ Id: `e${i}`, MessageBody: b }));
          const sent = await onNode(node, (n) => n.sqs.send(new SendMessageBatchCommand({ QueueUrl: urlOf(n, "std"), Entries: entries })));
          for (const ok of sent?.Successful ?? []) stdAcked.add(entries[Number(ok.Id!.slice(1))]!.MessageBody);
        }
      }
    };

    // ---- FIFO: one producer per group, each message retried (same deduplication id) on another
    // node until acknowledged, so a group's acknowledged order is its send order.
    const fifoAttempted = new Set<string>();
    const fifo = new DeliveryLog(fifoAttempted);
    const fifoAcked = Array.from({ length: fifoGroups }, () => 0);
    const fifoFirstDelivered = Array.from({ length: fifoGroups }, () => [] as number[]);
    const fifoOutOfOrder: string[] = [];
    const fifoProducer = async (group: number): Promise<void> => {
      for (let i = 0; producing; i++) {
        const body = `f-${group}-${i}`;
        fifoAttempted.add(body);
        for (let tries = 0; ; tries++) {
          const node = liveNode(group + i + tries);
          const sent = await onNode(node, (n) =>
            n.sqs.send(new SendMessageCommand({ QueueUrl: urlOf(n, "orders.fifo"), MessageBody: body, MessageGroupId: `g${group}`, MessageDeduplicationId: body })),
          );
          if (sent) break;
        }
        fifoAcked[group] = i + 1;
      }
    };

    // Consumers of both queues: receive, record, delete the batch.
    const consumer = async (preferred: number, queue: "std" | "orders.fifo"): Promise<void> => {
      const log = queue === "std" ? std : fifo;
      while (consuming) {
        const node = liveNode(preferred);
        const got = await onNode(node, (n) => n.sqs.send(new ReceiveMessageCommand({ QueueUrl: urlOf(n, queue), MaxNumberOfMessages: 10, VisibilityTimeout: visibilitySeconds, WaitTimeSeconds: 1 })));
        const messages = got?.Messages ?? [];
        if (messages.length === 0) continue;
        for (const m of messages) {
          const first = log.delivered(m.Body!, m.ReceiptHandle!);
          if (queue === "orders.fifo" && first) {
            const [, g, i] = m.Body!.split("-").map(Number) as [number, number, number];
            // In order per group: each message's first delivery is the next of its group.
            if (i !== fifoFirstDelivered[g]!.length) fifoOutOfOrder.push(`${m.Body} after ${fifoFirstDelivered[g]!.length} of g${g}`);
            fifoFirstDelivered[g]!.push(i);
          }
        }
        const entries = messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! }));
        const deleted = await onNode(node, (n) => n.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: urlOf(n, queue), Entries: entries })));
        for (const ok of deleted?.Successful ?? []) {
          const m = messages[Number(ok.Id!.slice(1))]!;
          log.deleteAcknowledged(m.Body!, m.ReceiptHandle!);
        }
      }
    };

    // ---- jobs: submits with an Idempotency-Key, retried on another node until acknowledged; HTTP
    // workers leasing and completing on every node; an event stream on node A.
    const jobOfKey = new Map<string, string>();
    const completionsOf = new Map<string, Array<{ node: string; generation: number }>>();
    const refusedCompletions: string[] = [];
    let jobSeq = 0;
    const submitter = async (preferred: number): Promise<void> => {
      while (producing) {
        const n = jobSeq++;
        for (let tries = 0; ; tries++) {
          const node = liveNode(preferred + tries);
          const res = await onNode(node, (nd) => http(nd, "POST", "/v1/queues/kjobs/jobs", { input: { n } }, { "idempotency-key": `k-${n}` }));
          if (!res) continue;
          expect([200, 201]).toContain(res.status);
          const id = (res.body as { job: { id: string } }).job.id;
          const known = jobOfKey.get(`k-${n}`);
          if (known !== undefined && known !== id) failures.push(`key k-${n} named two jobs: ${known}, ${id}`);
          jobOfKey.set(`k-${n}`, id);
          break;
        }
      }
    };
    const worker = async (preferred: number): Promise<void> => {
      while (consuming) {
        const node = liveNode(preferred);
        const leased = await onNode(node, (nd) => http(nd, "POST", "/v1/queues/kjobs/leases", { max: 5, waitSeconds: 1, leaseSeconds: visibilitySeconds }));
        if (!leased) continue;
        expect(leased.status).toBe(200);
        for (const job of (leased.body as { jobs: Array<{ id: string; leaseId: string; input: { n: number } }> }).jobs) {
          const generation = node.generation;
          const done = await onNode(node, (nd) => http(nd, "POST", `/v1/jobs/${job.id}/complete`, { leaseId: job.leaseId, output: { n: job.input.n, by: node.name } }));
          if (!done) continue;
          if (done.status === 200) completionsOf.set(job.id, [...(completionsOf.get(job.id) ?? []), { node: node.name, generation }]);
          else refusedCompletions.push(`${job.id}: ${done.status} ${JSON.stringify(done.body)}`);
        }
      }
    };
    const succeededEvents = new Map<string, number>();
    const events = await openEventStream(`${nodeA.server.url}/v1/events?queue=kjobs`);
    const streamRead = (async () => {
      for (let e = await events.next().catch(() => undefined); e !== undefined; e = await events.next().catch(() => undefined)) {
        if (e.event === "job.succeeded") {
          const id = (e.data as { job: { id: string } }).job.id;
          succeededEvents.set(id, (succeededEvents.get(id) ?? 0) + 1);
        }
      }
    })();

    const producers = [
      ...[0, 1, 2].map((i) => guard(`std sender ${i}`, stdSender(i))),
      ...Array.from({ length: fifoGroups }, (_, g) => guard(`fifo producer ${g}`, fifoProducer(g))),
      ...[0, 1, 2].map((i) => guard(`submitter ${i}`, submitter(i))),
    ];
    const consumers = [
      ...[0, 1, 2].map((i) => guard(`std consumer ${i}`, consumer(i, "std"))),
      ...[1, 2, 0].map((i) => guard(`fifo consumer ${i}`, consumer(i, "orders.fifo"))),
      ...[2, 0, 1].map((i) => guard(`worker ${i}`, worker(i))),
    ];
    const fifoAckedTotal = (): number => fifoAcked.reduce((a, b) => a + b, 0);
    const progress = (): string => `std ${stdAcked.size} acked, fifo ${fifoAckedTotal()} acked, jobs ${completionsOf.size} completed, failures: ${failures.join("\n")}`;
    const until = (what: string, done: () => boolean): Promise<unknown> => waitFor(() => failures.length > 0 || done(), { timeoutMs: 120_000, intervalMs: 20, what: `${what} (${progress()})` });

    await until("load on all three nodes", () => stdAcked.size >= 150 && fifoAckedTotal() >= 30 && completionsOf.size >= 20);
    expect(failures).toEqual([]);

    // kill -9 node C mid-load, with requests in flight to it (not between two of them on a busy machine).
    await until("requests in flight to node C", () => (inFlightOn.get("C") ?? 0) >= 2);
    const before = { std: stdAcked.size, fifo: fifoAckedTotal(), jobs: completionsOf.size };
    nodeC.down = true;
    process.kill(nodeC.server.pid, "SIGKILL");
    expect((await within(10_000, nodeC.server.exited, "node C to die")).signal).toBe("SIGKILL");
    nodeC.sqs.destroy();
    nodeC.agent.destroy();
    // A and B carry the load alone.
    await until("the surviving nodes to carry on", () => stdAcked.size >= before.std + 100 && fifoAckedTotal() >= before.fifo + 20 && completionsOf.size >= before.jobs + 20);
    expect(failures).toEqual([]);

    // Restart C on its port; the clients come back to it.
    const restarted = await startNode("C", nodeC.dataDir, nodeC.server.port);
    Object.assign(nodeC, restarted, { generation: 2, down: false });
    const jobsAtRestart = completionsOf.size;
    await until("node C to take load again", () => [...completionsOf.values()].some((c) => c.some((x) => x.node === "C" && x.generation === 2)) && completionsOf.size >= jobsAtRestart + 10);

    // Stop producing; consumers drain everything, including what C leased before it died.
    producing = false;
    await within(60_000, Promise.all(producers), "the producers to stop");
    const stdMustFind = [...stdAcked];
    await until("every acknowledged message to be consumed", () => stdMustFind.every((b) => std.deliveries.has(b)) && fifoAcked.every((n, g) => fifoFirstDelivered[g]!.length >= n));
    // Jobs: finished once no job of the queue is queued or running (a job C leased comes back when its lease lapses).
    await waitFor(
      async () => {
        const { body } = await http(nodeA, "GET", "/v1/queues/kjobs");
        const counts = (body as { queue: { stats: { jobs: Record<string, number> } } }).queue.stats.jobs;
        return failures.length > 0 || (counts.queued === 0 && counts.running === 0);
      },
      { timeoutMs: 120_000, intervalMs: 200, what: `every job to finish (${progress()})` },
    );
    await waitFor(async () => (await queueSize(nodeA.sqs, urlOf(nodeA, "std"))) === 0 && (await queueSize(nodeA.sqs, urlOf(nodeA, "orders.fifo"))) === 0, {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: "both queues to be empty",
    });
    consuming = false;
    await within(60_000, Promise.all(consumers), "the consumers to stop");

    // Every job succeeded once, with the output of its own input.
    const jobIds = [...jobOfKey.values()];
    const finals = await Promise.all(jobIds.map((id) => http(nodeA, "GET", `/v1/jobs/${id}`)));
    const notSucceeded = finals.filter((f) => f.body?.job?.status !== "succeeded").map((f) => JSON.stringify(f.body));
    const wrongOutput = finals.filter((f) => f.body?.job?.output?.n !== f.body?.job?.input?.n).map((f) => f.body?.job?.id as string);
    const completedTwice = [...completionsOf].filter(([, c]) => c.length > 1).map(([id]) => id);
    // The stream on A tells of each job finishing at most once, and of every one finished through
    // a node that lived on (one finished by C just before its kill may not have been told of).
    const toldOf = (id: string): boolean => (succeededEvents.get(id) ?? 0) === 1;
    await waitFor(() => [...completionsOf].every(([id, c]) => c.every((x) => x.node === "C" && x.generation === 1) || toldOf(id)), {
      timeoutMs: 30_000,
      what: "node A's event stream to tell of every job finished through a live node",
    });
    events.close();
    await streamRead;
    const toldTwice = [...succeededEvents].filter(([, n]) => n > 1).map(([id]) => id);

    const stdLost = stdMustFind.filter((b) => !std.deliveries.has(b));
    const fifoLost = fifoAcked.flatMap((n, g) => Array.from({ length: n }, (_, i) => `f-${g}-${i}`)).filter((b) => !fifo.deliveries.has(b));
    console.log(
      `three nodes, C killed and restarted: standard ${stdAcked.size} acknowledged of ${stdAttempted.size} sent, ${std.duplicates} delivered again; ` +
        `FIFO ${fifoAckedTotal()} in ${fifoGroups} groups, ${fifo.duplicates} delivered again; jobs ${jobIds.length}, ${refusedCompletions.length} completions refused (lease lapsed); ` +
        `${cutByKill} requests cut by the kill`,
    );
    // Killed mid-load: requests were in flight to C (its consumers' long polls at least).
    expect(cutByKill).toBeGreaterThan(0);
    expect({
      failures,
      stdLost,
      stdResurrected: std.resurrected,
      stdUnknown: std.unknown,
      fifoLost,
      fifoResurrected: fifo.resurrected,
      fifoUnknown: fifo.unknown,
      fifoOutOfOrder,
      notSucceeded,
      wrongOutput,
      completedTwice,
      toldTwice,
      distinctJobs: new Set(jobIds).size,
    }).toEqual({
      failures: [],
      stdLost: [],
      stdResurrected: [],
      stdUnknown: [],
      fifoLost: [],
      fifoResurrected: [],
      fifoUnknown: [],
      fifoOutOfOrder: [],
      notSucceeded: [],
      wrongOutput: [],
      completedTwice: [],
      toldTwice: [],
      distinctJobs: jobOfKey.size,
    });
  });
});
