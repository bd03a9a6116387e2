/**
 * Pipelined durability for a WAL database: commits run with synchronous=NORMAL (they write their
 * WAL frames but don't fsync), and this syncer fdatasyncs the WAL file on libuv's thread pool,
 * one sync at a time. Whoever must not be answered before its commit is on disk waits for the
 * next sync that *starts after* its commit: Linux syncs a file's dirty pages whichever descriptor
 * wrote them, so that sync covers every frame written before it began.
 *
 * Why: with synchronous=FULL the writing thread sits in fsync (≈1–2 ms) once per group commit and
 * executes nothing meanwhile. Here the next group's statements run while the previous group's
 * sync is in flight, and one sync still serves every commit made while it was waited for. An
 * acknowledgement still means "on disk", exactly as with FULL.
 *
 * Inline while the disk is quick: handing a sync to the pool costs two thread wake-ups and leaves
 * its answer waiting until the busy event loop gets round to it. When no sync is in flight and
 * recent inline syncs took under `maxMs`, the sync runs on the calling thread and its commits are
 * answered at once (docs/benchmarks-history.md has the measurements). A slow disk (syncs over `maxMs` on
 * average) sends syncs back to the pool, where statements keep running during them; every
 * `probeEvery`-th one is tried inline again, also between pool syncs, so a disk that got quick
 * again is noticed.
 */
import fs from "node:fs";

/** fdatasync of a descriptor, node-callback style; injectable so tests can hold a sync open. */
export type SyncFn = (fd: number, done: (error: Error | null) => void) => void;

/** Syncs on the calling thread while they are quick (see above). */
export interface InlineSync {
  /** fdatasync on the calling thread; throws on failure. */
  sync: (fd: number) => void;
  /** A monotonic clock in ms, to time inline syncs (injectable: tests play a slow disk). */
  nowMs: () => number;
  /** Inline while the running average of inline syncs stays under this. */
  maxMs: number;
  /** While syncs go to the pool, every this many is tried inline to measure the disk again. */
  probeEvery: number;
}

/** What the store uses: fdatasync inline while it averages under a millisecond. */
export const defaultInlineSync: InlineSync = { sync: (fd) => fs.fdatasyncSync(fd), nowMs: () => performance.now(), maxMs: 1, probeEvery: 16 };

export class WalSyncer {
  private fd: number | undefined;
  /** Callbacks answered by the sync in flight (it started after everything they wait for). */
  private running: Array<(error: Error | null) => void> | undefined;
  /** Callbacks that need a sync that hasn't started yet. */
  private waiting: Array<(error: Error | null) => void> = [];
  /** Commits made since the last sync started: a barrier has to wait only when there are some. */
  private dirty = false;
  private failure: Error | undefined;
  private closing = false;
  private readonly sync: SyncFn;
  /** Running average of inline sync times (ms); undefined until the first one. */
  private inlineAverageMs: number | undefined;
  /** Syncs sent to the pool since the last inline one. */
  private pooledSinceInline = 0;
  /** Syncs completed (inline ones included); exposed for tests and metrics. */
  syncs = 0;
  /** Of those, the ones run inline. */
  inlineSyncs = 0;
  /** Told how long each sync took (the server's fsync latency metric). */
  onSynced?: (seconds: number) => void;

  constructor(
    private readonly walPath: string,
    sync?: SyncFn,
    private readonly inline?: InlineSync,
  ) {
    this.sync = sync ?? ((fd, done) => fs.fdatasync(fd, done));
  }

  /** Call right after a COMMIT: the frames it wrote now await a sync. */
  committed(): void {
    this.dirty = true;
  }

  /**
   * `done` runs once everything committed so far is on disk (at once if nothing is pending), with
   * the error if the sync failed. A failed sync fails every later one too: after a failed fsync
   * the kernel may have dropped the dirty pages, so nothing written since can be trusted.
   */
  afterSync(done: (error: Error | null) => void): void {
    if (this.failure) return done(this.failure);
    if (!this.dirty) {
      // Nothing committed since the running sync began (if any): it covers everything.
      if (this.running) this.running.push(done);
      else done(null);
      return;
    }
    this.waiting.push(done);
    if (!this.running) this.startNext();
  }

  /**
   * Starts the sync the waiting callbacks need: inline when inline syncs are on and have been quick
   * (or a probe is due), else on the pool. Called with no sync in flight — from afterSync, or when
   * a pool sync finished and more waited — so a run of pool syncs can't starve the probe.
   */
  private startNext(): void {
    const inline = this.inline;
    if (!inline) return this.start();
    const quick = this.inlineAverageMs === undefined || this.inlineAverageMs <= inline.maxMs;
    if (!quick && this.pooledSinceInline < inline.probeEvery) {
      this.pooledSinceInline++;
      return this.start();
    }
    const batch = this.waiting;
    this.waiting = [];
    this.dirty = false;
    let error: Error | null = null;
    try {
      const fd = this.descriptor();
      const startMs = inline.nowMs();
      inline.sync(fd);
      const tookMs = inline.nowMs() - startMs;
      this.onSynced?.(tookMs / 1000);
      // Half weight on the newest: one slow sync sends syncs to the pool, a few quick probes bring them back.
      this.inlineAverageMs = this.inlineAverageMs === undefined ? tookMs : (this.inlineAverageMs + tookMs) / 2;
      this.pooledSinceInline = 0;
      this.syncs++;
      this.inlineSyncs++;
    } catch (caught) {
      this.fail(caught as Error);
      error = this.failure!;
    }
    for (const done of batch) done(error);
    if (this.closing) this.closeFd();
  }

  /** A promise form of afterSync, for barriers. */
  durable(): Promise<void> {
    return new Promise((resolve, reject) => this.afterSync((error) => (error ? reject(error) : resolve())));
  }

  /** Stops accepting syncs once those in flight and waiting are done, then closes the descriptor. */
  close(): void {
    this.closing = true;
    if (!this.running && this.waiting.length === 0) this.closeFd();
  }

  private start(): void {
    let fd: number;
    try {
      fd = this.descriptor();
    } catch (error) {
      this.fail(error as Error);
      return;
    }
    const batch = this.waiting;
    this.running = batch;
    this.waiting = [];
    this.dirty = false;
    const startMs = performance.now();
    this.sync(fd, (error) => {
      this.running = undefined;
      this.syncs++;
      this.onSynced?.((performance.now() - startMs) / 1000);
      if (error) {
        this.fail(error);
        for (const done of batch) done(this.failure!);
        return;
      }
      for (const done of batch) done(null);
      // Waiters that came during the sync came after new commits: they need one more.
      if (this.waiting.length > 0) this.startNext();
      else if (this.closing) this.closeFd();
    });
  }

  /** The WAL's descriptor, reopened if SQLite replaced the file (it normally reuses it). */
  private descriptor(): number {
    if (this.fd !== undefined) {
      // One fstat per sync: a replaced or deleted file has no links left (nlink 0).
      if (fs.fstatSync(this.fd).nlink > 0) return this.fd;
      fs.closeSync(this.fd);
      this.fd = undefined;
    }
    this.fd = fs.openSync(this.walPath, "r");
    return this.fd;
  }

  private fail(error: Error): void {
    this.failure = new Error(`fsync of ${this.walPath} failed; refusing further writes: ${error.message}`);
    const waiting = this.waiting;
    this.waiting = [];
    for (const done of waiting) done(this.failure);
  }

  private closeFd(): void {
    if (this.fd === undefined) return;
    fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
