/**
 * The server's CPU per POST /v1/jobs/{id}/output, over HTTP: `jobs` leased jobs, each with one
 * output request in flight at a time (as the SDK worker sends them) of `chunks` `[seq, time]`
 * chunks, and — as in the stream row — one client per job following /v1/jobs/{id}/events. Fixed
 * batches, so the figure doesn't move with the round trip the way the stream row's batches do.
 * With --rev, a clean snapshot of that revision's server runs beside the work tree's, rounds
 * alternating: a same-run before/after on a busy machine.
 *
 * Usage: npx tsx bench/stream-output-cost.ts [--rev REV] [--calls 20000] [--jobs 50] [--chunks 10] [--rounds 2]
 */
import { parseArgs } from "node:util";
import { processCpuSeconds } from "./procs.js";
import { leanFetch } from "./lean-fetch.js";
import { startSluiceServer } from "./peers/sluice-server.js";
import { snapshotRevision } from "./peers/snapshot.js";

const { values } = parseArgs({ options: { rev: { type: "string" }, calls: { type: "string" }, jobs: { type: "string" }, chunks: { type: "string" }, rounds: { type: "string" } } });
const calls = Number(values.calls ?? 20_000);
const jobCount = Number(values.jobs ?? 50);
const perCall = Number(values.chunks ?? 10);
const rounds = Number(values.rounds ?? 2);
const repoRoot = process.cwd();
const servers: Array<{ name: string; dir: string }> = [{ name: "work tree", dir: repoRoot }];
if (values.rev !== undefined) {
  const snap = snapshotRevision(repoRoot, values.rev);
  servers.unshift({ name: `rev ${snap.commit}`, dir: snap.dir });
}
const json = { "content-type": "application/json" };

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(" ")[1]);
}

async function round(dir: string): Promise<string> {
  const server = await startSluiceServer({ repoRoot: dir, entry: "dist", ...(process.env.PROF_DIR ? { cpuProfDir: process.env.PROF_DIR } : {}) });
  const lean = leanFetch(server.url, jobCount + 4);
  const readers: AbortController[] = [];
  try {
    for (let i = 0; i < jobCount; i++) {
      const res = await lean.fetch(`${server.url}/v1/queues/cost/jobs`, { method: "POST", headers: json, body: JSON.stringify({ input: { job: i } }) });
      if (!res.ok) throw new Error(`submit: ${res.status} ${await res.text()}`);
    }
    const leaseRes = await lean.fetch(`${server.url}/v1/queues/cost/leases`, { method: "POST", headers: json, body: JSON.stringify({ max: jobCount, leaseSeconds: 3600 }) });
    const { jobs } = JSON.parse(await leaseRes.text()) as { jobs: Array<{ id: string; leaseId: string }> };
    if (jobs.length !== jobCount) throw new Error(`leased ${jobs.length} of ${jobCount}`);
    let received = 0;
    for (const j of jobs) {
      const ac = new AbortController();
      readers.push(ac);
      const res = await fetch(`${server.url}/v1/jobs/${j.id}/events`, { signal: ac.signal });
      void (async () => {
        try {
          for await (const part of res.body!) received += (part as Uint8Array).length;
        } catch {
          // aborted at the end
        }
      })();
    }
    let seq = 0;
    let rtts: number[] = [];
    const send = async (j: { id: string; leaseId: string }, n: number) => {
      for (let i = 0; i < n; i++) {
        const chunks = Array.from({ length: perCall }, () => [seq++, performance.now()]);
        const t = performance.now();
        const res = await lean.fetch(`${server.url}/v1/jobs/${j.id}/output`, { method: "POST", headers: json, body: JSON.stringify({ leaseId: j.leaseId, chunks }) });
        if (!res.ok) throw new Error(`output: ${res.status} ${await res.text()}`);
        await res.text();
        rtts.push(performance.now() - t);
      }
    };
    const each = Math.ceil(calls / jobCount);
    await Promise.all(jobs.map((j) => send(j, Math.ceil(each / 5)))); // warm-up
    const [c0, w0, f0] = [await metric(server.url, "sluice_store_commit_writes_count"), await metric(server.url, "sluice_store_commit_writes_sum"), await metric(server.url, "sluice_store_fsync_seconds_count")];
    rtts = [];
    const cpu0 = processCpuSeconds(server.pid)!;
    const t0 = performance.now();
    await Promise.all(jobs.map((j) => send(j, each)));
    const cpuS = processCpuSeconds(server.pid)! - cpu0;
    const wallS = (performance.now() - t0) / 1000;
    const [c1, w1, f1] = [await metric(server.url, "sluice_store_commit_writes_count"), await metric(server.url, "sluice_store_commit_writes_sum"), await metric(server.url, "sluice_store_fsync_seconds_count")];
    const n = each * jobCount;
    rtts.sort((a, b) => a - b);
    const q = (p: number): string => rtts[Math.min(rtts.length - 1, Math.floor(rtts.length * p))]!.toFixed(1);
    return `${((cpuS * 1e6) / n).toFixed(1)} µs server CPU a call, ${(n / wallS).toFixed(0)} calls/s, ${((w1 - w0) / (c1 - c0)).toFixed(1)} writes a commit, ${((f1 - f0) / n).toFixed(2)} fsyncs a call, round trip ms p50 ${q(0.5)} / p99 ${q(0.99)} / max ${q(1)}, ${(received / 1e6).toFixed(1)} MB of events read`;
  } finally {
    for (const ac of readers) ac.abort();
    await lean.close();
    await server.stop();
  }
}

for (let r = 0; r < rounds; r++) {
  for (const s of servers) console.log(`round ${r + 1}, ${s.name}: ${await round(s.dir)}`);
}
