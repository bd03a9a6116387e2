/**
 * WAL frames a job writes, by the table or index each page belongs to: rounds of submits and one
 * lease carrying the previous round's completions (as bench/jobs-inprocess.ts), automatic
 * checkpoints off, then the WAL read frame by frame. Every frame is a page a commit wrote, which
 * the fsync and the next checkpoint write again: fewer frames per job is less CPU in all three.
 * A freed page reused by another table counts for the table that holds it at the end.
 *
 * Usage: npx tsx bench/jobs-wal-frames.ts [rounds, default 100]   (ROUND=jobs per round, default 22; INPUT=bytes, default 1000)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { openJobsCycle } from "./jobs-cycle.js";

const rounds = Number(process.argv[2] ?? 100);
const round = Number(process.env.ROUND ?? 22);
const dir = mkdtempSync(join(tmpdir(), "sluice-wal-frames-"));
const file = join(dir, "s.db");
// No checkpoints at all, so the WAL holds every frame the measured rounds wrote.
const { store, cycle } = openJobsCycle({ store: { filename: file, pipelinedSync: true, checkpointThread: false }, round, inputBytes: Number(process.env.INPUT ?? 1000) });

let acks = await cycle([]);
for (let i = 0; i < 300; i++) acks = await cycle(acks); // a table of a few thousand jobs first
store.db.pragma("wal_autocheckpoint = 0");
store.db.pragma("wal_checkpoint(TRUNCATE)");
for (let i = 0; i < rounds; i++) acks = await cycle(acks);

const reader = new Database(file, { readonly: true });
const owner = new Map<number, string>();
for (const r of reader.prepare<[], { name: string; pageno: number }>("SELECT name, pageno FROM dbstat").all()) owner.set(r.pageno, r.name);
const wal = readFileSync(`${file}-wal`);
const pageSize = wal.readUInt32BE(8);
const byOwner = new Map<string, number>();
let frames = 0;
let commits = 0;
for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
  const name = owner.get(wal.readUInt32BE(at)) ?? "(free)";
  byOwner.set(name, (byOwner.get(name) ?? 0) + 1);
  frames++;
  if (wal.readUInt32BE(at + 4) !== 0) commits++; // a commit's last frame holds the database size
}
const n = rounds * round;
console.log(`${n} jobs, ${commits} commits: ${(frames / n).toFixed(2)} WAL frames per job (${pageSize}-byte pages)`);
for (const [name, count] of [...byOwner].sort((a, b) => b[1] - a[1])) console.log(`${(count / n).toFixed(3).padStart(7)}  ${name}`);
reader.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
