/**
 * The running-job counts behind maxRunning / maxRunningPerTenant across a real kill -9: workers
 * lease, complete and fail jobs of a limited queue (with tenants) against a CLI server that is
 * SIGKILLed mid-traffic. The counts are written in each change's own transaction, so
 * the file, opened as the crash left it, holds exactly the running jobs per queue and tenant; the
 * restarted server then fills the cap to the job, no more and no fewer.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { runningCounts } from "../support/running-counts.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

afterEach(killAllChildren);
afterAll(removeTempDirs);

interface Leased {
  id: string;
  leaseId: string;
  tenant?: string;
}

const maxRunning = 6;
const maxRunningPerTenant = 3;
const tenants = ["t0", "t1", "t2", "t3", "t4"];

async function post(url: string, body: unknown): Promise<{ status: number; body: { jobs?: Leased[]; results?: unknown[] } }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { jobs?: Leased[] } };
}

/** The counts as the file holds them, each checked against the running jobs it counts. */
function countsInFile(dataDir: string): Record<string, number> {
  const db = new Database(join(dataDir, "sluice.db"));
  try {
    const rows = runningCounts(db);
    for (const r of rows) expect(r.kept, `the ${r.scope} count`).toBe(r.actual);
    return Object.fromEntries(rows.map((r) => [r.scope, r.kept]));
  } finally {
    db.close();
  }
}

describe("running counts across kill -9 (SQLite)", () => {
  it("are exact in the file the crash left, and the restarted server fills the cap exactly", async () => {
    const dataDir = await makeTempDir("sluice-running-kill9-");
    const first = await spawnCli({ dataDir });
    expect((await fetch(`${first.url}/v1/queues/k`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ maxRunning, maxRunningPerTenant }) })).status).toBe(200);
    const jobs = Array.from({ length: 400 }, (_, n) => ({ input: { n }, tenant: tenants[n % tenants.length], maxAttempts: 100 }));
    for (let i = 0; i < jobs.length; i += 100) expect((await post(`${first.url}/v1/queues/k/jobs/batch`, { jobs: jobs.slice(i, i + 100) })).status).toBe(200);

    // Four workers, a job each (fewer than the cap: the restarted server has slots to fill); each
    // lease reports the previous job, every third failed to run again.
    let acknowledged = 0;
    let killed = false;
    const worker = async (w: number): Promise<void> => {
      let held: Leased[] = [];
      for (let turn = 0; !killed; turn++) {
        const fail = held.filter((_, i) => (turn + i + w) % 3 === 0);
        const complete = held.filter((j) => !fail.includes(j));
        try {
          const res = await post(`${first.url}/v1/queues/k/leases`, {
            max: 1,
            leaseSeconds: 600,
            complete: complete.map((j) => ({ id: j.id, leaseId: j.leaseId, output: { w } })),
            fail: fail.map((j) => ({ id: j.id, leaseId: j.leaseId, error: { message: "again" }, retryable: true, retryAfterSeconds: 0 })),
          });
          acknowledged += held.length;
          held = res.body.jobs ?? [];
        } catch {
          return; // the kill
        }
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    await waitFor(() => acknowledged >= 150, { what: "150 outcomes acknowledged before the kill", timeoutMs: 60_000 });
    process.kill(first.pid, "SIGKILL");
    killed = true;
    await first.exited;
    await Promise.all(workers);

    const atKill = countsInFile(dataDir);
    expect(Object.keys(atKill).sort()).toEqual(["queue", ...tenants]);
    expect(atKill.queue).toBeLessThanOrEqual(maxRunning);
    for (const t of tenants) expect(atKill[t]).toBeLessThanOrEqual(maxRunningPerTenant);

    // The leases of the killed server are still running (600 s): the new one starts the rest of the cap.
    const second = await spawnCli({ dataDir, port: first.port });
    const started = (await post(`${second.url}/v1/queues/k/leases`, { max: 100, leaseSeconds: 600 })).body.jobs!;
    expect(started).toHaveLength(maxRunning - atKill.queue!);
    expect((await post(`${second.url}/v1/queues/k/leases`, { max: 100, leaseSeconds: 600 })).body.jobs).toEqual([]);
    process.kill(second.pid, "SIGKILL");
    await second.exited;
    const after = countsInFile(dataDir);
    expect(after.queue).toBe(maxRunning);
    console.log(`running counts across kill -9: ${acknowledged} outcomes acknowledged, ${atKill.queue} running at the kill (${tenants.map((t) => `${t} ${atKill[t]}`).join(", ")}), each count equal to its running jobs; after the restart ${started.length} more started, ${after.queue} = maxRunning`);
  });
});
