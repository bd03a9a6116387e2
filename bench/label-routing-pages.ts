/**
 * Which b-trees the leases of bench/label-routing.ts write: after 50 leases of a row, the WAL is
 * checkpointed, the next 50 leases (each carrying its worker's completions) run, and the WAL's
 * frames are counted by the table or index their page belonged to (the dbstat table, read once
 * the queues are filled). Prints pages written per leased job, per b-tree, for the plain row, the
 * one-class row and the all-classes row (10 requirement classes interleaved job by job).
 *
 * Usage: npx tsx bench/label-routing-pages.ts [queued per queue, default 20000] [input bytes, default 1000]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jobServices } from "./jobs-cycle.js";
import { allClassLabels, classLabels, classes, fillQueue } from "./label-classes.js";
import { openSqliteStore } from "../src/stores/sqlite/sqlite-store.js";

const queued = Number(process.argv[2] ?? 20_000);
const input = "x".repeat(Number(process.argv[3] ?? 1000));
const max = 10;
const dir = mkdtempSync(join(tmpdir(), "sluice-label-pages-"));
const file = join(dir, "s.db");
// No idle WAL truncation: the frames are read from the WAL after each row.
const store = openSqliteStore({ filename: file, pipelinedSync: true, walCheckMs: 0 });
// The store's own connection: a second one could not stop its checkpoints.
const { db } = store;
const { jobs } = jobServices(store);
const fill = (queue: string, requires: (n: number) => Record<string, string> | undefined): Promise<void> => fillQueue(jobs, queue, queued, input, requires);

await fill("plain", () => undefined);
await fill("labelled", (n) => classLabels(n % classes));
db.pragma("wal_autocheckpoint = 0");
const owner = new Map<number, string>();
for (const r of db.prepare<[], { name: string; pageno: number }>("SELECT name, pageno FROM dbstat").all()) owner.set(r.pageno, r.name);

/** Frames in the WAL by the b-tree their page belonged to ("new": a page allocated since). */
function framesByTree(): Map<string, number> {
  const wal = readFileSync(`${file}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const out = new Map<string, number>();
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const name = owner.get(wal.readUInt32BE(at)) ?? "new";
    out.set(name, (out.get(name) ?? 0) + 1);
  }
  return out;
}

type Ack = { kind: "complete"; id: string; leaseId: string; output: unknown };
async function row(name: string, queue: string, labels: (lease: number) => Record<string, string> | undefined): Promise<void> {
  const acks = new Map<string, Ack[]>();
  const lease = async (l: number): Promise<number> => {
    const lb = labels(l);
    const worker = lb === undefined ? "" : Object.keys(lb).join();
    const { leased } = await jobs.leaseWithAcks("", queue, { max, ...(lb ? { labels: lb } : {}) }, acks.get(worker) ?? []);
    acks.set(worker, leased.map((j) => ({ kind: "complete", id: j.id, leaseId: j.leaseToken, output: null })));
    return leased.length;
  };
  for (let l = 0; l < 50; l++) await lease(l);
  db.pragma("wal_checkpoint(TRUNCATE)");
  let leased = 0;
  for (let l = 50; l < 100; l++) leased += await lease(l);
  const frames = [...framesByTree()].sort((a, b) => b[1] - a[1]);
  const total = frames.reduce((n, [, f]) => n + f, 0);
  console.log(`${name.padEnd(12)} ${(total / leased).toFixed(2)} pages per leased job: ${frames.map(([t, f]) => `${t} ${(f / leased).toFixed(2)}`).join(", ")}`);
}

await row("plain", "plain", () => undefined);
await row("one class", "labelled", (l) => classLabels(l % classes));
await row("all classes", "labelled", () => allClassLabels);
await store.close();
rmSync(dir, { recursive: true, force: true });
