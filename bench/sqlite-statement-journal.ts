/**
 * What a statement journal costs a message DELETE. SQLite copies every page a statement touches
 * into a journal of its own when the statement writes through a trigger that "may abort": the
 * kept-count triggers of migration 033 called octet_length(), and any function call counts. Cycles
 * of 32 leased-message INSERTs and the previous cycle's DELETEs, one transaction each (a job
 * queue's submit and completion), with 033's count triggers put back, three variants of them, and
 * the counts moved in code as the store moves them since migration 051 (kept-counts.ts).
 *
 * Usage: npx tsx bench/sqlite-statement-journal.ts [messages, default 20000] [variant]
 * Without a variant it runs each in turn and prints CPU per cycled message; under
 * `valgrind --tool=callgrind` give one variant and count `vdbeCloseStatement` calls.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { migrate } from "../src/stores/sqlite/migrate.js";

const countsOn = (event: "INSERT" | "DELETE", set: string): string =>
  `DROP TRIGGER queue_message_counts_on_${event.toLowerCase()};
   CREATE TRIGGER queue_message_counts_on_${event.toLowerCase()} AFTER ${event} ON messages
   BEGIN UPDATE OR FAIL queue_message_counts SET ${set} WHERE queue_id = ${event === "INSERT" ? "new" : "old"}.queue_id; END;`;
/** Migration 033's count triggers, which 051 dropped. */
const triggers033 = `
  CREATE TRIGGER queue_message_counts_on_insert AFTER INSERT ON messages
  BEGIN UPDATE queue_message_counts SET messages = messages + 1, bytes = bytes + octet_length(new.body) WHERE queue_id = new.queue_id; END;
  CREATE TRIGGER queue_message_counts_on_delete AFTER DELETE ON messages
  BEGIN UPDATE queue_message_counts SET messages = messages - 1, bytes = bytes - octet_length(old.body) WHERE queue_id = old.queue_id; END;`;
/** SQL run after the migrations and 033's triggers: the variant's triggers in place of those. */
const variants: Record<string, string> = {
  // The triggers as 033 made them: bytes by octet_length(), default conflict handling.
  triggers: "",
  // OR FAIL alone: the DELETE is still journalled, because of the function call.
  "or-fail": countsOn("DELETE", "messages = messages - 1, bytes = bytes - octet_length(old.body)"),
  // OR FAIL and no function: the DELETE needs no statement journal (a bound only: the bytes are wrong).
  "no-function": countsOn("DELETE", "messages = messages - 1, bytes = bytes - 1000"),
  // The same for the INSERT, whose FIFO-group trigger (its table's foreign key) also journals it:
  // both statements without journals (a bound only: no group heads, wrong bytes).
  "no-journals":
    countsOn("DELETE", "messages = messages - 1, bytes = bytes - 1000") +
    countsOn("INSERT", "messages = messages + 1, bytes = bytes + 1000") +
    "DROP TRIGGER message_groups_on_insert;",
  // No count triggers: each cycle reads its DELETEs' sizes, deletes, and moves the counts once per
  // statement, as the store does (kept-counts.ts); its INSERTs' bytes come from the bodies.
  "in-code": "DROP TRIGGER queue_message_counts_on_insert; DROP TRIGGER queue_message_counts_on_delete;",
};

function run(variant: string, messages: number): number {
  const dir = mkdtempSync(join(tmpdir(), "sluice-stmt-journal-"));
  const db = new Database(join(dir, "x.db"));
  db.pragma("page_size = 8192");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.pragma("temp_store = MEMORY");
  migrate(db);
  db.exec(triggers033);
  db.exec(variants[variant]!);
  const inCode = variant === "in-code";
  db.prepare("INSERT INTO queues (name, config, tags, created_at_ms, updated_at_ms) VALUES ('q', '{}', '{}', 0, 0)").run();
  const insert = db.prepare(
    `INSERT INTO messages (queue_id, message_id, body, body_md5, sent_at_ms, visible_at_ms, priority, sender_id, receive_count, first_received_at_ms, receipt_token)
     VALUES (1, ?, ?, 'md5', 1, 2, 0, 's', 1, 1, 'token')`,
  );
  const remove = db.prepare<[number]>("DELETE FROM messages WHERE seq = ?");
  const move = db.prepare<[number, number]>("UPDATE queue_message_counts SET messages = messages + ?, bytes = bytes + ? WHERE queue_id = 1");
  const sizes = db.prepare(`SELECT queue_id, octet_length(body) FROM messages WHERE seq IN (${Array(32).fill("?").join(", ")})`).raw();
  const removeAll = db.prepare(`DELETE FROM messages WHERE seq IN (${Array(32).fill("?").join(", ")})`);
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const text = "x".repeat(1000);
  let live: number[] = [];
  const cycle = (round: number): void => {
    begin.run();
    if (!inCode) for (const seq of live) remove.run(seq);
    else if (live.length === 32) {
      const bytes = (sizes.all(...live) as Array<[number, number]>).reduce((sum, [, b]) => sum + b, 0);
      removeAll.run(...live);
      move.run(-32, -bytes);
    }
    live = [];
    for (let i = 0; i < 32; i++) live.push(Number(insert.run(`m${round}-${i}`, text).lastInsertRowid));
    if (inCode) move.run(32, 32 * Buffer.byteLength(text));
    commit.run();
  };
  for (let r = 0; r < 50; r++) cycle(r); // warm-up
  const rounds = Math.ceil(messages / 32);
  const cpu0 = process.cpuUsage();
  for (let r = 0; r < rounds; r++) cycle(50 + r);
  const cpu = process.cpuUsage(cpu0);
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return (cpu.user + cpu.system) / (rounds * 32);
}

const messages = Number(process.argv[2] ?? 20_000);
const only = process.argv[3];
if (only !== undefined && !(only in variants)) throw new Error(`variant must be one of: ${Object.keys(variants).join(", ")}`);
for (const variant of only === undefined ? Object.keys(variants) : [only]) {
  console.log(`${variant}: ${run(variant, messages).toFixed(1)} µs CPU per message (insert + delete)`);
}
