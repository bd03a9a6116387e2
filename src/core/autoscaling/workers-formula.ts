/**
 * How many workers a queue needs, from what it observed (docs/operations.md, "Autoscaling"):
 *
 *   workers = ceil( (λ + B / T) · S / c )
 *
 * λ arrivals per second (submits and retries, SQS sends), S the mean service time in seconds
 * (lease to report), c each worker's concurrency, B the visible backlog and T the drain target in
 * seconds. λ·S is the number of jobs in service at once that keeping up takes (Little's law);
 * B/T is the extra rate that empties the backlog within T. With work waiting but no service time
 * observed yet (nothing has run), one worker: enough to start measuring, and to scale from zero.
 */

export interface WorkloadSample {
  arrivalsPerSecond: number;
  /** Undefined until an attempt has run in the window. */
  meanServiceSeconds: number | undefined;
  backlog: number;
  drainTargetSeconds: number;
  workerConcurrency: number;
}

export interface WorkersAdvice extends WorkloadSample {
  workersDesired: number;
  /** The two terms before rounding up: workers to keep up, and extra workers to drain the backlog in time. */
  keepUpWorkers: number;
  drainWorkers: number;
}

/** Rounding slack: 50 × 0.2 / 2 must be 5 workers, not 6 because 0.2 has no exact binary form. */
const epsilon = 1e-9;

export function adviseWorkers(s: WorkloadSample): WorkersAdvice {
  if (s.meanServiceSeconds === undefined) {
    const idle = s.backlog === 0 && s.arrivalsPerSecond === 0;
    return { ...s, workersDesired: idle ? 0 : 1, keepUpWorkers: 0, drainWorkers: 0 };
  }
  const keepUpWorkers = (s.arrivalsPerSecond * s.meanServiceSeconds) / s.workerConcurrency;
  const drainWorkers = (s.backlog / s.drainTargetSeconds) * (s.meanServiceSeconds / s.workerConcurrency);
  const total = keepUpWorkers + drainWorkers;
  const workersDesired = total <= epsilon ? (s.backlog > 0 ? 1 : 0) : Math.ceil(total - epsilon);
  return { ...s, workersDesired, keepUpWorkers, drainWorkers };
}
