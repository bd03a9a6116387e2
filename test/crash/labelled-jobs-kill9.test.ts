/**
 * Jobs with requires across a real kill -9 (SQLite: their input is kept apart from their rows,
 * migration 052): submitters and a labelled worker run against a CLI server that is SIGKILLed
 * mid-traffic, then restarted on the same data dir. Every submit answered 201 exists with its
 * input, every completion answered 200 is `succeeded` with its output, the kept message counts
 * and bytes equal the rows, and the jobs still queued are leased with their inputs whole.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { testStoreConfig } from "../support/test-store.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";
import { api } from "./jobs-crash-kit.js";

afterEach(killAllChildren);
afterAll(removeTempDirs);

interface WireJob {
  id: string;
  status: string;
  input: unknown;
  output: unknown;
  leaseId?: string;
}

const labels = { gpu: "a100" };
const inputOf = (n: number): { n: number; prompt: string } => ({ n, prompt: "é".repeat(n % 700) });

describe("jobs with requires across kill -9", () => {
  it("keeps every acknowledged submit with its input and every acknowledged completion", async (ctx) => {
    const dataDir = await makeTempDir("sluice-labelled-kill9-");
    if ((await testStoreConfig(dataDir)).store === "postgres") ctx.skip();
    const first = await spawnCli({ dataDir });

    const submitted = new Map<string, number>();
    const completed = new Map<string, unknown>();
    let killed = false;
    const submitter = async (from: number): Promise<void> => {
      for (let n = from; !killed; n += 2) {
        try {
          const r = await api<{ job: WireJob }>(first.url, "POST", "/v1/queues/gpu/jobs", { input: inputOf(n), requires: n % 3 === 0 ? { gpu: "a100", mem: "80g" } : labels });
          if (r.status === 201) submitted.set(r.body.job.id, n);
        } catch {
          return; // the kill
        }
      }
    };
    const worker = async (): Promise<void> => {
      while (!killed) {
        try {
          const r = await api<{ jobs: WireJob[] }>(first.url, "POST", "/v1/queues/gpu/leases", { max: 10, labels: { ...labels, mem: "80g" } });
          // Most are completed; every fourth stays running (its lease ends after the restart).
          for (const job of r.body.jobs.filter((_, i) => i % 4 !== 3)) {
            const output = { done: (job.input as { n: number }).n };
            const c = await api<{ job: WireJob }>(first.url, "POST", `/v1/jobs/${job.id}/complete`, { leaseId: job.leaseId, output });
            if (c.status === 200) completed.set(job.id, output);
          }
        } catch {
          return;
        }
      }
    };
    const traffic = [submitter(0), submitter(1), worker()];
    await waitFor(() => submitted.size >= 600 && completed.size >= 200, { what: "600 submits and 200 completions acknowledged", timeoutMs: 60_000 });
    process.kill(first.pid, "SIGKILL");
    killed = true;
    await first.exited;
    await Promise.all(traffic);

    const file = new Database(join(dataDir, "sluice.db"), { readonly: true });
    try {
      const [counts] = file
        .prepare<[], { kept: number; actual: number; keptBytes: number; actualBytes: number }>(
          `SELECT c.messages AS kept, (SELECT count(*) FROM messages m WHERE m.queue_id = q.id) AS actual,
             c.bytes AS keptBytes, (SELECT coalesce(sum(coalesce(body_bytes, octet_length(body))), 0) FROM messages m WHERE m.queue_id = q.id) AS actualBytes
           FROM queues q JOIN queue_message_counts c ON c.queue_id = q.id WHERE q.name = 'gpu'`,
        )
        .all();
      expect([counts!.kept, counts!.keptBytes]).toEqual([counts!.actual, counts!.actualBytes]);
      expect(file.prepare("SELECT count(*) FROM job_inputs").pluck().get()).toBeGreaterThan(0);
    } finally {
      file.close();
    }

    const second = await spawnCli({ dataDir, port: first.port });
    const queued: string[] = [];
    for (const [id, n] of submitted) {
      const { status, body } = await api<{ job: WireJob }>(second.url, "GET", `/v1/jobs/${id}`);
      expect(status, `job ${id}`).toBe(200);
      expect(body.job.input).toEqual(inputOf(n));
      if (completed.has(id)) expect([body.job.status, body.job.output]).toEqual(["succeeded", completed.get(id)]);
      if (body.job.status === "queued") queued.push(id);
    }
    const leased = new Map<string, unknown>();
    for (let round = 0; leased.size < queued.length && round < 100; round++) {
      const r = await api<{ jobs: WireJob[] }>(second.url, "POST", "/v1/queues/gpu/leases", { max: 100, labels: { ...labels, mem: "80g" } });
      for (const job of r.body.jobs) leased.set(job.id, job.input);
    }
    for (const id of queued) expect(leased.get(id), `queued job ${id} leased with its input`).toEqual(inputOf(submitted.get(id)!));
    process.kill(second.pid, "SIGKILL");
    await second.exited;
    console.log(`labelled jobs across kill -9: ${submitted.size} submits and ${completed.size} completions acknowledged, ${queued.length} queued leased again`);
  });
});
