/** A JobService over a real SQLite file, with a manual clock, deterministic ids and a fixed jitter draw. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { SluiceError } from "../../src/core/errors.js";
import { JobService } from "../../src/core/jobs/job-service.js";
import { QueueService } from "../../src/core/queue-service.js";
import { type SqliteStore, openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { counterIds } from "../core/service-harness.js";

export interface JobsHarness {
  jobs: JobService;
  queues: QueueService;
  store: SqliteStore;
  clock: ManualClock;
  dir: string;
  /** Closes and reopens the store on the same file (a restart). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export function openJobsHarness(opts: { random?: () => number; keepDir?: boolean } = {}): JobsHarness {
  const dir = mkdtempSync(join(tmpdir(), "sluice-jobs-"));
  const clock = new ManualClock();
  const ids = counterIds();
  const build = () => {
    const store = openSqliteStore({ filename: join(dir, "sluice.db") });
    const queues = new QueueService({ store, clock, ids, senderId: "000000000000" });
    const jobs = new JobService({ store, queues, clock, ids, senderId: "000000000000", random: opts.random ?? (() => 0.5) });
    return { store, queues, jobs };
  };
  const harness: JobsHarness = {
    ...build(),
    clock,
    dir,
    async restart() {
      harness.jobs.close();
      harness.queues.waiters.closeAll();
      await harness.store.close();
      Object.assign(harness, build());
    },
    async close() {
      harness.jobs.close();
      harness.queues.waiters.closeAll();
      await harness.store.close();
      if (!opts.keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** Awaits `p` and checks it rejected with a SluiceError of this code. */
export async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(SluiceError);
  expect((error as SluiceError).code).toBe(code);
}

/** Messages in `<queue>-dlq`, visible or not. */
export async function deadLetterDepth(h: JobsHarness, queue: string): Promise<number> {
  const s = await h.queues.queueStats(await h.queues.getQueue("", `${queue}-dlq`));
  return s.visible + s.inFlight + s.delayed;
}
