/**
 * Sluice nodes through PgBouncer in transaction pooling mode (fewer server connections than the
 * nodes' pools): migrations, FIFO sends with deduplication, ordered receives and deletes, jobs, and
 * a cross-node wake-up over the listening connection that goes to PostgreSQL directly
 * (--postgres-listen-url).
 */
import { CreateQueueCommand, DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { sqsV3 } from "../support/clients.js";
import { type PgBouncer, startPgBouncer } from "../support/pgbouncer.js";
import { usePostgresDatabase } from "../support/postgres.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const database = usePostgresDatabase();
let bouncer: PgBouncer;
let pooledUrl: string;
const nodes: RunningServer[] = [];
const clients: SQSClient[] = [];

beforeAll(async () => {
  const direct = new URL(database.url);
  bouncer = await startPgBouncer({ postgresPort: Number(direct.port), poolSize: 3 });
  pooledUrl = `postgres://postgres@127.0.0.1:${bouncer.port}${direct.pathname}`;
  // Both nodes start at once: their migrations meet in PgBouncer's pool.
  const started = await Promise.all(
    [0, 1].map(async () =>
      startServer({ host: "127.0.0.1", port: 0, dataDir: await makeTempDir("sluice-bouncer-"), store: "postgres", postgresUrl: pooledUrl, postgresListenUrl: database.url, postgresPoolSize: 8, logLevel: "warn" }),
    ),
  );
  nodes.push(...started);
  for (const node of nodes) clients.push(sqsV3(node.url));
});

afterAll(async () => {
  for (const c of clients) c.destroy();
  await Promise.all(nodes.map((n) => n.close()));
  await bouncer?.stop();
  await removeTempDirs();
});

describe("Sluice nodes through PgBouncer (pool_mode = transaction)", () => {
  it("FIFO sends with deduplication, then receives and deletes in group order, across the two nodes", async () => {
    const [a, b] = clients as [SQSClient, SQSClient];
    const urlOn = (i: number): string => `${nodes[i]!.url}/000000000000/orders.fifo`;
    await a.send(new CreateQueueCommand({ QueueName: "orders.fifo", Attributes: { FifoQueue: "true", ContentBasedDeduplication: "true" } }));
    const groups = ["g0", "g1", "g2"];
    for (let i = 0; i < 21; i++) {
      const client = i % 2 === 0 ? a : b;
      const sent = { QueueUrl: urlOn(i % 2), MessageBody: `${groups[i % 3]}-${i}`, MessageGroupId: groups[i % 3] };
      const first = await client.send(new SendMessageCommand(sent));
      // The same body again, through the other node: deduplicated to the first.
      const again = await (client === a ? b : a).send(new SendMessageCommand({ ...sent, QueueUrl: urlOn((i + 1) % 2) }));
      expect(again.MessageId).toBe(first.MessageId);
    }
    const seen: string[] = [];
    for (let round = 0; seen.length < 21 && round < 100; round++) {
      const node = round % 2;
      const got = await clients[node]!.send(new ReceiveMessageCommand({ QueueUrl: urlOn(node), MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
      for (const m of got.Messages ?? []) {
        seen.push(m.Body!);
        await clients[1 - node]!.send(new DeleteMessageCommand({ QueueUrl: urlOn(1 - node), ReceiptHandle: m.ReceiptHandle! }));
      }
    }
    expect(seen).toHaveLength(21);
    for (const g of groups) {
      const order = seen.filter((s) => s.startsWith(`${g}-`)).map((s) => Number(s.split("-")[1]));
      expect(order).toEqual([...order].sort((x, y) => x - y));
    }
  });

  it("a long poll on one node is woken by a send on the other (listening directly), and a job runs across them", async () => {
    const [a, b] = clients as [SQSClient, SQSClient];
    await a.send(new CreateQueueCommand({ QueueName: "plain" }));
    const polled = a.send(new ReceiveMessageCommand({ QueueUrl: `${nodes[0]!.url}/000000000000/plain`, WaitTimeSeconds: 20 }));
    // The poll's first receive, through PgBouncer, finds nothing: round trips through node A after it.
    for (let i = 0; i < 3; i++) await a.send(new GetQueueAttributesCommand({ QueueUrl: `${nodes[0]!.url}/000000000000/plain`, AttributeNames: ["All"] }));
    await b.send(new SendMessageCommand({ QueueUrl: `${nodes[1]!.url}/000000000000/plain`, MessageBody: "wake" }));
    const sentAt = performance.now();
    expect((await polled).Messages?.map((m) => m.Body)).toEqual(["wake"]);
    // Far inside the poll's 20 s: woken by the notice, not by its own timer.
    expect(performance.now() - sentAt).toBeLessThan(10_000);

    const post = (node: number, path: string, body: unknown): Promise<Response> =>
      fetch(`${nodes[node]!.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const { job } = (await (await post(0, "/v1/queues/bounced/jobs", { input: { n: 1 } })).json()) as { job: { id: string } };
    const waited = fetch(`${nodes[0]!.url}/v1/jobs/${job.id}?wait=30`).then((r) => r.json() as Promise<{ job: { status: string } }>);
    const { jobs } = (await (await post(1, "/v1/queues/bounced/leases", { max: 1, waitSeconds: 5 })).json()) as { jobs: Array<{ id: string; leaseId: string }> };
    expect(jobs.map((j) => j.id)).toEqual([job.id]);
    expect((await post(1, `/v1/jobs/${job.id}/complete`, { leaseId: jobs[0]!.leaseId, output: { ok: true } })).status).toBe(200);
    expect((await waited).job.status).toBe("succeeded");
  });

  it("the requests went through PgBouncer's pool", async () => {
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${bouncer.port}/pgbouncer` });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ database: string; total_xact_count: string }>("SHOW STATS");
      const name = new URL(database.url).pathname.slice(1);
      expect(Number(rows.find((r) => r.database === name)?.total_xact_count ?? 0)).toBeGreaterThan(50);
    } finally {
      await admin.end();
    }
  });
});
