/** Per-queue job settings: defaults for submits and leases, retry backoff, result retention. */
import { fail } from "./errors.js";
import { limits } from "./limits.js";
import { type LeaseLimits, hasLeaseLimits } from "./lease-limits.js";

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
  /** Jobs started per second at most, by every worker together (lease-limits.ts); undefined = no limit. */
  rateLimitPerSecond?: number;
  /** Jobs running at once at most; undefined = no limit. */
  maxRunning?: number;
  /** Jobs of one tenant running at once at most; undefined = no limit. */
  maxRunningPerTenant?: number;
  /** Jobs of one tenant started per second at most (a bucket per tenant); undefined = no limit. */
  rateLimitPerTenantPerSecond?: number;
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
  /** null clears a limit. */
  rateLimitPerSecond?: number | null;
  maxRunning?: number | null;
  maxRunningPerTenant?: number | null;
  rateLimitPerTenantPerSecond?: number | null;
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
    rateLimitPerSecond: patch.rateLimitPerSecond === null ? undefined : (patch.rateLimitPerSecond ?? current.rateLimitPerSecond),
    maxRunning: patch.maxRunning === null ? undefined : (patch.maxRunning ?? current.maxRunning),
    maxRunningPerTenant: patch.maxRunningPerTenant === null ? undefined : (patch.maxRunningPerTenant ?? current.maxRunningPerTenant),
    rateLimitPerTenantPerSecond: patch.rateLimitPerTenantPerSecond === null ? undefined : (patch.rateLimitPerTenantPerSecond ?? current.rateLimitPerTenantPerSecond),
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
  if (s.rateLimitPerSecond !== undefined) checkJobInteger("rateLimitPerSecond", s.rateLimitPerSecond, 1, j.rateLimitPerSecondMax);
  if (s.maxRunning !== undefined) checkJobInteger("maxRunning", s.maxRunning, 1, j.maxRunningMax);
  if (s.maxRunningPerTenant !== undefined) checkJobInteger("maxRunningPerTenant", s.maxRunningPerTenant, 1, j.maxRunningMax);
  if (s.rateLimitPerTenantPerSecond !== undefined) checkJobInteger("rateLimitPerTenantPerSecond", s.rateLimitPerTenantPerSecond, 1, j.rateLimitPerSecondMax);
}

/** The queue's limits on starting jobs, as a lease carries them (undefined when it has none). */
export function leaseLimitsOf(s: JobQueueSettings): LeaseLimits | undefined {
  // Settings are a LeaseLimits already: no copy on every lease.
  return hasLeaseLimits(s) ? s : undefined;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
