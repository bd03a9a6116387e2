/**
 * The Batch API across PostgreSQL nodes and restarts: a file uploaded through one node is read
 * and run through another, a worker on either completes the jobs, and the batch still finishes
 * when the node that created it is gone (its state is in the store, moved by whichever node
 * runs next). On SQLite, a batch in progress survives a restart of its only server.
 */
import { Sluice } from "@sluice/client";
import OpenAI, { toFile } from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { usePostgresDatabase } from "../support/postgres.js";
import { startPostgresNodes } from "../support/postgres-nodes.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

const database = usePostgresDatabase();
afterAll(() => removeTempDirs());

const clientOf = (node: RunningServer) => new OpenAI({ baseURL: `${node.url}/v1`, apiKey: "unused-on-loopback", maxRetries: 0 });
const requests = (n: number) => `${Array.from({ length: n }, (_, i) => JSON.stringify({ custom_id: `r${i}`, method: "POST", url: "/v1/embeddings", body: { i } })).join("\n")}\n`;
const statusOf = (client: OpenAI, id: string, status: string) =>
  waitFor(
    async () => {
      const b = await client.batches.retrieve(id);
      return b.status === status ? b : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 50, what: `batch ${status}` },
  );
const queueExists = async (node: RunningServer, queue: string) => (await fetch(`${node.url}/v1/queues/${queue}`)).status === 200;

describe("the Batch API on PostgreSQL nodes", () => {
  it("runs a file uploaded through one node as a batch created on another, and finishes it after that node is gone", async () => {
    const [a, b] = (await startPostgresNodes(2, database.url)) as [RunningServer, RunningServer];
    const viaA = clientOf(a);
    const viaB = clientOf(b);
    const file = await viaA.files.create({ file: await toFile(Buffer.from(requests(30)), "in.jsonl"), purpose: "batch" });
    expect(await (await viaB.files.content(file.id)).text()).toBe(requests(30));
    const created = await viaB.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h", metadata: { queue: "embed" } });
    await statusOf(viaA, created.id, "in_progress");
    await waitFor(() => queueExists(a, "embed"), { what: "the batch's queue" });
    await b.close();
    const worker = new Sluice({ url: a.url }).queue("embed").work(async (job) => ({ embedding: [(job.input as { body: { i: number } }).body.i] }), { concurrency: 4 });
    try {
      const done = await statusOf(viaA, created.id, "completed");
      expect(done.request_counts).toEqual({ total: 30, completed: 30, failed: 0 });
      const lines = (await (await viaA.files.content(done.output_file_id!)).text()).trim().split("\n");
      expect(lines.map((l) => (JSON.parse(l) as { custom_id: string }).custom_id)).toEqual(Array.from({ length: 30 }, (_, i) => `r${i}`));
      expect(JSON.parse(lines[7]!)).toMatchObject({ custom_id: "r7", response: { status_code: 200, body: { embedding: [7] } }, error: null });
    } finally {
      await worker.close();
    }
  });
});

describe("the Batch API on SQLite", () => {
  it("keeps a batch in progress across a restart, and finishes it once the jobs are done", async () => {
    const dataDir = await makeTempDir("sluice-batch-restart-");
    const first = await startServer({ host: "127.0.0.1", port: 0, dataDir, logLevel: "warn" });
    const created = await (async () => {
      const client = clientOf(first);
      const file = await client.files.create({ file: await toFile(Buffer.from(requests(5)), "in.jsonl"), purpose: "batch" });
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h", metadata: { queue: "later" } });
      await statusOf(client, batch.id, "in_progress");
      return batch;
    })();
    await first.close();
    const second = await startServer({ host: "127.0.0.1", port: 0, dataDir, logLevel: "warn" });
    const worker = new Sluice({ url: second.url }).queue("later").work(async () => ({ ok: true }), { concurrency: 2 });
    try {
      const done = await statusOf(clientOf(second), created.id, "completed");
      expect(done.request_counts).toEqual({ total: 5, completed: 5, failed: 0 });
    } finally {
      await worker.close();
      await second.close();
    }
  });
});
