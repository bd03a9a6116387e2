/** Per-queue job settings: defaults for submits and leases, retry backoff, result retention. */
import { fail } from "../errors.js";
import { limits } from "../limits.js";

export interface BackoffSettings {
  baseSeconds: number;
  capSeconds: number;
}

export interface JobQueueSettings {
  maxAttempts: number;
  backoff: BackoffSettings;
  leaseSeconds: number;
  /** Per attempt; undefined = no timeout. */
  timeoutSeconds?: number;
  resultTtlSeconds: number;
  /** The autoscaling advisor's target: workers enough to empty the backlog within this (docs/operations.md). */
  drainTargetSeconds: number;
  /** Jobs one worker runs at once (its concurrency), for the advisor's worker count. */
  workerConcurrency: number;
}

export const defaultJobQueueSettings: JobQueueSettings = {
  maxAttempts: 3,
  backoff: { baseSeconds: 1, capSeconds: 300 },
  leaseSeconds: 30,
  resultTtlSeconds: 7 * 86_400,
  drainTargetSeconds: 300,
  workerConcurrency: 1,
};

/** Settings as stored: rows written before a field existed get its default. */
export function withSettingDefaults(stored: Partial<JobQueueSettings>): JobQueueSettings {
  return { ...defaultJobQueueSettings, ...stored };
}

/** A partial update; `timeoutSeconds: null` clears the timeout. */
export interface JobQueueSettingsPatch {
  maxAttempts?: number;
  backoff?: Partial<BackoffSettings>;
  leaseSeconds?: number;
  timeoutSeconds?: number | null;
  resultTtlSeconds?: number;
  drainTargetSeconds?: number;
  workerConcurrency?: number;
}

export function checkJobInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    fail("ValidationFailed", `${name} must be an integer from ${min} to ${max}, got ${value}.`);
  }
}

export function applySettingsPatch(current: JobQueueSettings, patch: JobQueueSettingsPatch): JobQueueSettings {
  const next: JobQueueSettings = {
    maxAttempts: patch.maxAttempts ?? current.maxAttempts,
    backoff: { ...current.backoff, ...stripUndefined(patch.backoff ?? {}) },
    leaseSeconds: patch.leaseSeconds ?? current.leaseSeconds,
    timeoutSeconds: patch.timeoutSeconds === null ? undefined : (patch.timeoutSeconds ?? current.timeoutSeconds),
    resultTtlSeconds: patch.resultTtlSeconds ?? current.resultTtlSeconds,
    drainTargetSeconds: patch.drainTargetSeconds ?? current.drainTargetSeconds,
    workerConcurrency: patch.workerConcurrency ?? current.workerConcurrency,
  };
  validateJobQueueSettings(next);
  return next;
}

export function validateJobQueueSettings(s: JobQueueSettings): void {
  const j = limits.jobs;
  checkJobInteger("maxAttempts", s.maxAttempts, 1, j.maxAttemptsMax);
  checkJobInteger("backoff.baseSeconds", s.backoff.baseSeconds, 0, j.backoffBaseMaxSeconds);
  checkJobInteger("backoff.capSeconds", s.backoff.capSeconds, 0, j.retryDelayMaxSeconds);
  if (s.backoff.capSeconds < s.backoff.baseSeconds) fail("ValidationFailed", "backoff.capSeconds must be at least backoff.baseSeconds.");
  checkJobInteger("leaseSeconds", s.leaseSeconds, 1, limits.visibilityTimeoutMaxSeconds);
  if (s.timeoutSeconds !== undefined) checkJobInteger("timeoutSeconds", s.timeoutSeconds, 1, j.timeoutMaxSeconds);
  checkJobInteger("resultTtlSeconds", s.resultTtlSeconds, j.resultTtlMinSeconds, j.resultTtlMaxSeconds);
  checkJobInteger("drainTargetSeconds", s.drainTargetSeconds, 1, j.drainTargetMaxSeconds);
  checkJobInteger("workerConcurrency", s.workerConcurrency, 1, j.workerConcurrencyMax);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
