/**
 * Why the store writes `LIMIT ? + 0` (src/stores/sqlite/bound-limit.ts): the jobs ready query
 * timed three ways on a real SQLite file — with a bare `LIMIT ?` (SQLite re-plans it on every
 * call, because better-sqlite3 binds every parameter anew), with `LIMIT ? + 0`, and with a literal.
 *
 * Usage: npx tsx bench/sqlite-limit-replan.ts [in-flight messages, default 8]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { migrate } from "../src/stores/sqlite/migrate.js";
import { readyUngroupedQuery } from "../src/stores/sqlite/ready-order.js";

const inFlight = Number(process.argv[2] ?? 8);
const calls = 200_000;
const dir = mkdtempSync(join(tmpdir(), "sluice-limit-"));
const db = new Database(join(dir, "x.db"));
db.pragma("journal_mode = WAL");
migrate(db);
db.prepare("INSERT INTO queues (name, config, tags, created_at_ms, updated_at_ms) VALUES ('q', '{}', '{}', 0, 0)").run();
const insert = db.prepare(
  "INSERT INTO messages (queue_id, message_id, body, body_md5, sent_at_ms, visible_at_ms, priority, sender_id) VALUES (1, ?, ?, 'x', 1000, ?, 5, 's')",
);
// In flight (visible far in the future) plus as many ready ones, so each call reads rows.
for (let i = 0; i < inFlight; i++) insert.run(`f${i}`, "x".repeat(1000), 1e12);
for (let i = 0; i < inFlight; i++) insert.run(`r${i}`, "x".repeat(1000), 2000);

const sql = readyUngroupedQuery("seq, message_id, body, priority, sent_at_ms");
const variants: Array<[string, string, unknown[]]> = [
  ["LIMIT ? (bare parameter)", sql.replace(/LIMIT .*$/, "LIMIT ?"), [1, 5000, 0, 4]],
  ["LIMIT ? + 0 (what the store uses)", sql.replace(/LIMIT .*$/, "LIMIT ? + 0"), [1, 5000, 0, 4]],
  ["LIMIT 4 (literal)", sql.replace(/LIMIT .*$/, "LIMIT 4"), [1, 5000, 0]],
];
console.log(`SQLite ${db.prepare("SELECT sqlite_version()").pluck().get() as string}, ${inFlight} in flight + ${inFlight} ready, ${calls.toLocaleString("en-US")} calls each`);
for (const [name, text, args] of variants) {
  const statement = db.prepare(text);
  for (let i = 0; i < 20_000; i++) statement.all(...args);
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) statement.all(...args);
  console.log(`${name.padEnd(36)} ${(Number(process.hrtime.bigint() - start) / calls / 1000).toFixed(2)} µs/call`);
}
db.close();
rmSync(dir, { recursive: true, force: true });
