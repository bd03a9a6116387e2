/**
 * Checkpoints the WAL off the event loop. SQLite's automatic checkpoint runs inside the COMMIT
 * that takes the WAL past 1,000 pages: it copies the WAL's pages into the database and fsyncs
 * both files on the writing thread, and every request waits meanwhile. Here the writing
 * connection turns that off (wal_autocheckpoint = 0) and a worker thread with a connection of its
 * own runs PASSIVE checkpoints while commits come in. PASSIVE never blocks the writer, and syncs
 * the database before it counts pages as copied, as the automatic one does.
 *
 * The WAL starts over only when a write finds every frame copied, which a writer committing all
 * the time never finds. So once a pass finds the WAL past `restartFrames`, the writes are held
 * (the event loop isn't) for one more pass — only the frames written during the last one — and
 * the next group starts the WAL over. Should the worker fail, SQLite's own checkpoints come back.
 * Passes start only once the WAL holds `restartFrames` (read from the WAL index's header), so each
 * page is copied about as often as SQLite's own checkpoints copied it, with no extra fsyncs.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { endianness } from "node:os";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";

/** PRAGMA wal_checkpoint's row for one pass, or why it failed. */
interface PassResult {
  busy?: number;
  log?: number;
  checkpointed?: number;
  error?: string;
}

// CommonJS run with eval: nothing for the TypeScript build or the test runner to resolve.
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { fileMustExist: true });
db.pragma("busy_timeout = 0");
parentPort.on("message", (m) => {
  if (m === "close") {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [r] = db.pragma("wal_checkpoint(PASSIVE)");
    parentPort.postMessage({ busy: r.busy, log: r.log, checkpointed: r.checkpointed });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message ? error.message : error) });
  }
});
`;

/** SQLite's default wal_autocheckpoint, put back if the worker fails. */
const sqliteAutoCheckpointPages = 1000;

export interface WalCheckpointerOptions {
  /** How often to look for commits since the last pass; 0: never on a timer (a test calls check()). */
  everyMs?: number;
  /** WAL frames past which the WAL is made to start over. */
  restartFrames?: number;
}

export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly timer: NodeJS.Timeout | undefined;
  private idleWaiters: Array<() => void> = [];
  private readonly restartFrames: number;
  private readonly exited: Promise<void>;
  private seenGroup: number;
  /** The WAL index (the -shm file), whose header says how many frames the WAL holds. */
  private shmFd: number | undefined;
  private readonly header = Buffer.alloc(4);
  private inFlight = false;
  private closed = false;
  private failed = false;
  /** While the pass before a restart runs: what held writes wait for. */
  private held: { promise: Promise<void>; release: () => void } | undefined;
  /** Passes completed, and how many of them held writes so the WAL could start over (tests). */
  passes = 0;
  restarts = 0;
  /** Frames in the WAL at the last pass (tests: it starts over). */
  lastLog: number | undefined;
  /** The last failure a pass reported (a full disk, say); the next pass tries again. */
  lastError: string | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly filename: string,
    /** How many groups the store has committed (GroupCommitter.group). */
    private readonly committedGroups: () => number,
    options: WalCheckpointerOptions = {},
  ) {
    this.restartFrames = options.restartFrames ?? sqliteAutoCheckpointPages;
    db.pragma("wal_autocheckpoint = 0");
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(workerSource, { eval: true, workerData: { driver, filename } });
    this.worker.unref();
    this.exited = new Promise((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.on("message", (r: PassResult) => this.onPass(r));
    this.worker.on("error", (err) => this.fail(err.message));
    this.worker.on("exit", () => this.fail("the checkpoint thread exited"));
    this.seenGroup = committedGroups();
    const everyMs = options.everyMs ?? 50;
    this.timer = everyMs > 0 ? setInterval(() => this.check(), everyMs).unref() : undefined;
  }

  /** What GroupCommitter.holdWrites asks: the pass before a restart, while it runs. */
  holdWrites(): Promise<void> | undefined {
    return this.held?.promise;
  }

  /** Starts a pass if the WAL has grown to `restartFrames` since it started over and none is running. */
  check(): void {
    if (this.inFlight || this.closed || this.failed) return;
    const group = this.committedGroups();
    if (group === this.seenGroup) return;
    const frames = this.walFrames();
    if (frames !== undefined && frames < this.restartFrames) return;
    this.seenGroup = group;
    this.pass();
  }

  /**
   * mxFrame of the WAL index header (offset 16, native byte order: sqlite.org/walformat.html);
   * undefined if it can't be read, and a pass finds out instead.
   */
  private walFrames(): number | undefined {
    try {
      this.shmFd ??= openSync(`${this.filename}-shm`, "r");
      if (readSync(this.shmFd, this.header, 0, 4, 16) !== 4) return undefined;
      return endianness() === "LE" ? this.header.readUInt32LE(0) : this.header.readUInt32BE(0);
    } catch {
      return undefined;
    }
  }

  /** Resolves once no pass is running (tests). */
  idle(): Promise<void> {
    if (!this.inFlight) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pass(): void {
    this.inFlight = true;
    this.worker.postMessage("pass");
  }

  private onPass(r: PassResult): void {
    this.inFlight = false;
    this.passes++;
    this.lastError = r.error;
    this.lastLog = r.log;
    if (this.held) {
      // Every frame is copied unless the pass was refused: the next write starts the WAL over.
      this.release();
    } else if (!this.closed && r.error === undefined && r.busy === 0 && (r.log ?? 0) >= this.restartFrames) {
      this.holdForRestart();
    }
    if (!this.inFlight) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Holds the writes for one more pass: then every frame is copied, and the next write restarts the WAL. */
  private holdForRestart(): void {
    let release: () => void = () => {};
    const promise = new Promise<void>((resolve) => (release = resolve));
    this.held = { promise, release };
    this.restarts++;
    this.pass();
  }

  private release(): void {
    const held = this.held;
    this.held = undefined;
    held?.release();
  }

  /** The worker is gone: SQLite's own checkpoints again, and no write waits for it. */
  private fail(message: string): void {
    if (this.closed || this.failed) return;
    this.failed = true;
    this.lastError = message;
    clearInterval(this.timer);
    this.release();
    this.inFlight = false;
    for (const wake of this.idleWaiters.splice(0)) wake();
    this.db.pragma(`wal_autocheckpoint = ${sqliteAutoCheckpointPages}`);
  }

  /** Stops the passes and closes the worker's connection (before the store closes its own). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.release();
    if (this.shmFd !== undefined) closeSync(this.shmFd);
    if (this.failed) return;
    // Referenced again, or a process with nothing else left would exit before the close finishes.
    this.worker.ref();
    this.worker.postMessage("close");
    await this.exited;
  }
}
