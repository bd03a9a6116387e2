/**
 * Checkpoints the WAL from its own thread and connection. A checkpoint copies WAL pages into the
 * database file and fsyncs it; done by the writer (SQLite's autocheckpoint) it lands inside a
 * commit, and every request of that group commit waits for it. PASSIVE never blocks the writer;
 * a checkpoint of an already-checkpointed WAL only reads the WAL index, so a steady interval is
 * cheap when idle.
 */
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

export interface CheckpointWorkerOptions {
  filename: string;
  intervalMs: number;
}

const port = parentPort;
if (!port) throw new Error("checkpoint-worker.ts must run as a worker thread");
const options = workerData as CheckpointWorkerOptions;
const db = new Database(options.filename);
db.pragma("busy_timeout = 5000");
// This connection only checkpoints; it must never checkpoint on a commit of its own.
db.pragma("wal_autocheckpoint = 0");

const timer = setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch {
    // Busy or interrupted: the next tick tries again, and the writer's backstop bounds the WAL.
  }
}, options.intervalMs);

port.on("message", (message: "close") => {
  if (message !== "close") return;
  clearInterval(timer);
  db.close();
  port.close();
});
port.postMessage("ready");
