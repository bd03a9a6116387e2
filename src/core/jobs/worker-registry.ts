/**
 * Workers you can see (GET /v1/workers): a lease that names its worker (`workerId`) is noted here
 * in memory — a map write, nothing more on the lease path — and a timer writes what changed to
 * the store once a second, so every node lists every node's workers. `running` counts the jobs
 * this node leased to a worker until any node reports them done (the store's notices reach every
 * node), and a worker with jobs still running stays listed while it works through them.
 */
import type { Clock, TimerHandle } from "../clock.js";
import type { LeasedJob } from "../job.js";
import type { Notifier, StoreNotice } from "../notifier.js";
import type { WorkerSighting, WorkerStore } from "../worker-store.js";

/** How long a worker stays listed after its last lease request. */
export const workerListedForMs = 60_000;
const flushEveryMs = 1_000;
/** A row with running jobs is written again this often (its worker is still alive). */
const refreshRunningEveryMs = 15_000;
/** Rows last seen longer ago than this are deleted (bounded slices, one a minute). */
const pruneAfterMs = 10 * 60_000;
const pruneSlice = 1_000;
/** Sightings kept in memory: the oldest idle ones are forgotten past this. */
const entriesMax = 100_000;
/** Events after which a job no longer runs under the lease that started it. */
const leftRunning = new Set(["job.succeeded", "job.failed", "job.canceled", "job.retrying", "job.queued"]);

/** A worker's sighting on one queue, as this node keeps it. */
export interface WorkerEntry {
  row: WorkerSighting;
  running: Set<string>;
  dirty: boolean;
  writtenAtMs: number;
}

export interface WorkerView {
  workerId: string;
  queues: string[];
  labels: Record<string, string> | null;
  lastSeenAtMs: number;
  running: number;
}

export class WorkerRegistry {
  private readonly entries = new Map<string, WorkerEntry>();
  /** The entry each running job was leased under. */
  private readonly jobs = new Map<string, WorkerEntry>();
  private timer: TimerHandle | undefined;
  private lastPruneAtMs = 0;
  private flushing: Promise<void> | undefined;
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(
    private readonly store: WorkerStore,
    private readonly clock: Clock,
    notifier: Notifier,
    /** This node, in the rows it writes. */
    private readonly nodeId: string,
    private readonly onError: (err: unknown) => void,
  ) {
    this.unsubscribe = notifier.subscribe(this.onNotice);
  }

  /** A lease request named its worker: noted, written within a second. */
  seen(account: string, workerId: string, queueName: string, labels: Record<string, string> | undefined): WorkerEntry {
    const key = `${account}\u0000${workerId}\u0000${queueName}`;
    let entry = this.entries.get(key);
    const nowMs = this.clock.nowMs();
    const labelsJson = labels === undefined ? undefined : JSON.stringify(labels);
    if (entry === undefined) {
      if (this.entries.size >= entriesMax) this.forgetIdle();
      entry = { row: { account, workerId, queueName, nodeId: this.nodeId, labelsJson, running: 0, lastSeenAtMs: nowMs }, running: new Set(), dirty: true, writtenAtMs: nowMs };
      this.entries.set(key, entry);
    } else {
      entry.row.lastSeenAtMs = nowMs;
      entry.row.labelsJson = labelsJson;
      entry.dirty = true;
    }
    this.schedule();
    return entry;
  }

  /** Jobs a lease answer handed the worker: running until a notice says otherwise. */
  leased(entry: WorkerEntry, jobs: readonly LeasedJob[]): void {
    if (jobs.length === 0) return;
    for (const job of jobs) {
      entry.running.add(job.id);
      this.jobs.set(job.id, entry);
    }
    entry.dirty = true;
  }

  /** The account's workers seen in the last minute, on every node, by worker id. */
  async list(account: string, limit: number): Promise<WorkerView[]> {
    const rows = await this.store.workerList({ account, sinceMs: this.clock.nowMs() - workerListedForMs, limit });
    const byWorker = new Map<string, WorkerView & { labelsAtMs: number }>();
    for (const row of rows) {
      let view = byWorker.get(row.workerId);
      if (view === undefined) byWorker.set(row.workerId, (view = { workerId: row.workerId, queues: [], labels: null, lastSeenAtMs: 0, running: 0, labelsAtMs: -1 }));
      if (!view.queues.includes(row.queueName)) view.queues.push(row.queueName);
      view.running += row.running;
      view.lastSeenAtMs = Math.max(view.lastSeenAtMs, row.lastSeenAtMs);
      if (row.lastSeenAtMs > view.labelsAtMs) {
        view.labelsAtMs = row.lastSeenAtMs;
        view.labels = row.labelsJson === undefined ? null : (JSON.parse(row.labelsJson) as Record<string, string>);
      }
    }
    return [...byWorker.values()].map(({ labelsAtMs: _, ...view }) => ({ ...view, queues: view.queues.sort() }));
  }

  /** Writes what changed now (tests, and shutdown). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.write().finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  /** Stops writing (shutdown): at most the last second's sightings are not written. */
  stop(): void {
    this.closed = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.unsubscribe();
  }

  private readonly onNotice = (notice: StoreNotice): void => {
    if (notice.kind !== "jobChanged") return;
    const entry = this.jobs.get(notice.jobId);
    if (entry === undefined || !notice.events.some((e) => leftRunning.has(e))) return;
    this.jobs.delete(notice.jobId);
    entry.running.delete(notice.jobId);
    entry.dirty = true;
    this.schedule();
  };

  private schedule(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = this.clock.setTimer(flushEveryMs, () => {
      this.timer = undefined;
      void this.flush().catch(this.onError);
    });
  }

  private async write(): Promise<void> {
    const nowMs = this.clock.nowMs();
    const rows: WorkerSighting[] = [];
    let busy = false;
    for (const entry of this.entries.values()) {
      const refresh = entry.running.size > 0 && nowMs - entry.writtenAtMs >= refreshRunningEveryMs;
      if (entry.running.size > 0) busy = true;
      if (!entry.dirty && !refresh) continue;
      // A worker with jobs running is alive: its heartbeats hold their leases.
      if (refresh) entry.row.lastSeenAtMs = nowMs;
      entry.row.running = entry.running.size;
      entry.dirty = false;
      entry.writtenAtMs = nowMs;
      rows.push({ ...entry.row });
    }
    if (rows.length > 0) await this.store.workerUpsertMany({ rows });
    if (nowMs - this.lastPruneAtMs >= workerListedForMs) {
      this.lastPruneAtMs = nowMs;
      await this.store.workerPrune({ beforeMs: nowMs - pruneAfterMs, limit: pruneSlice });
      this.forgetIdle(nowMs - workerListedForMs);
    }
    // Rows with running jobs are refreshed while they run.
    if (busy) this.schedule();
  }

  /** Drops idle sightings (no running job) last seen before `beforeMs` (default: all idle ones). */
  private forgetIdle(beforeMs = Number.POSITIVE_INFINITY): void {
    for (const [key, entry] of this.entries) {
      if (entry.running.size === 0 && !entry.dirty && entry.row.lastSeenAtMs < beforeMs) this.entries.delete(key);
    }
  }
}
