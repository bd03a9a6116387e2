/**
 * Streamed output across two nodes on one PostgreSQL database: a client on node A follows a job
 * that a worker runs through node B, live and resumed with Last-Event-ID, and reads its chunks on A.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import type { RunningServer } from "../../src/server/index.js";
import { usePostgresDatabase } from "../support/postgres.js";
import { startPostgresNodes } from "../support/postgres-nodes.js";
import { within } from "../support/wait.js";
import { type Json, openEventStream } from "./http-harness.js";

const database = usePostgresDatabase();

async function api(server: RunningServer, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.url}${path}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, body: (await res.json()) as Json };
}

describe("streamed output on two PostgreSQL-backed nodes", () => {
  it("a client on A streams, in order, the chunks a worker on B posts", async () => {
    const [a, b] = (await startPostgresNodes(2, database.url)) as [RunningServer, RunningServer];
    const job = (await api(a, "POST", "/v1/queues/gen/jobs", { input: { prompt: "p" } })).body.job;
    const stream = await openEventStream(`${a.url}/v1/jobs/${job.id}/events`);
    onTestFinished(() => stream.close());
    const [leased] = (await api(b, "POST", "/v1/queues/gen/leases", { max: 1 })).body.jobs;
    for (let i = 0; i < 5; i++) {
      const r = await api(b, "POST", `/v1/jobs/${job.id}/output`, { leaseId: leased.leaseId, chunks: [`t${2 * i}`, `t${2 * i + 1}`] });
      expect(r.body.chunks).toBe(2 * i + 2);
    }
    await api(b, "POST", `/v1/jobs/${job.id}/complete`, { leaseId: leased.leaseId, output: "end" });
    const got: string[] = [];
    const ids: string[] = [];
    for (;;) {
      const e = await within(10_000, stream.next());
      if (!e) break;
      if (e.event === "job.output") {
        expect(e.data.index).toBe(got.length);
        got.push(...(e.data.chunks as string[]));
        ids.push(e.id!);
      }
    }
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`));
    // Resumed on A after the second batch: the rest, and the end.
    const resumed = await openEventStream(`${a.url}/v1/jobs/${job.id}/events`, { "Last-Event-ID": ids[1]! });
    onTestFinished(() => resumed.close());
    const rest: number[] = [];
    for (;;) {
      const e = await within(10_000, resumed.next());
      if (!e) break;
      if (e.event === "job.output") rest.push(e.data.index as number);
    }
    expect(rest).toEqual([4, 6, 8]);
    expect((await api(a, "GET", `/v1/jobs/${job.id}/output-chunks?from=8`)).body).toEqual({ attempt: 1, chunks: ["t8", "t9"], next: 10, done: true });
  });
});
