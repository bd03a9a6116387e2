/**
 * The label-routing benches' jobs (label-routing.ts, label-routing-pages.ts): ten requirement
 * classes, class i requiring {"k<i>":"yes"}, and a queue filled with jobs 500 submits at a time.
 */
import type { JobService } from "../src/core/index.js";

export const classes = 10;
export const classLabels = (i: number): Record<string, string> => ({ [`k${i}`]: "yes" });
export const allClassLabels = Object.assign({}, ...Array.from({ length: classes }, (_, i) => classLabels(i))) as Record<string, string>;

/** Submits `count` jobs of `input` to `queue`, job n requiring `requires(n)` (undefined: nothing). */
export async function fillQueue(jobs: JobService, queue: string, count: number, input: string, requires: (n: number) => Record<string, string> | undefined): Promise<void> {
  for (let n = 0; n < count; n += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, count - n) }, (_, k) => {
        const r = requires(n + k);
        return jobs.submit("", queue, { input, ...(r ? { requires: r } : {}) });
      }),
    );
  }
}
