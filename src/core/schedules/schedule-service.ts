/**
 * Schedules in core: define, read, pause and resume them, and fire the due ones (the scheduler
 * loop calls runDue). Every write is a compare-and-set on the record's version (schedule-store.ts):
 * a fire creates its runs' jobs in the same transaction as it moves the schedule to its next run,
 * so each run is one job across restarts and nodes — the loser of a race writes nothing.
 */
import type { Clock } from "../clock.js";
import { SluiceError, fail } from "../errors.js";
import type { JobCreateItem, JobCreateResult } from "../job-store.js";
import { limits } from "../limits.js";
import { planDueRuns, upcomingRuns } from "./due-runs.js";
import type { CronCompiler, RunTimes } from "./run-times.js";
import { everySecondsRunTimes } from "./run-times.js";
import type { ScheduleInput, ScheduleRecord } from "./schedule.js";
import type { ScheduleStore } from "./schedule-store.js";
import { type ScheduleDefinition, checkScheduleName, validateScheduleInput } from "./schedule-validation.js";

/** What a fire needs of the jobs layer: its runs' jobs built as submits, and told of once created. */
export interface ScheduleRunJobs {
  /** One create item per run (queue created on first use, options applied, key from scheduleRunKey). */
  itemsFor(schedule: ScheduleRecord, runs: readonly number[], nowMs: number): Promise<JobCreateItem[]>;
  /** After the fire committed: events, woken workers. */
  created(results: readonly JobCreateResult[]): void;
}

export interface ScheduleServiceDeps {
  store: ScheduleStore;
  clock: Clock;
  cron: CronCompiler;
  runs: ScheduleRunJobs;
  /** A run's jobs could not be built or written (its queue deleted a moment ago, say): it stays due and is tried again. */
  onFireError?: (err: unknown, schedule: ScheduleRecord) => void;
}

export interface ScheduleView {
  schedule: ScheduleRecord;
  /** The next runs (the first may be due now); empty while paused. */
  nextRuns: number[];
}

export interface SchedulePage {
  schedules: ScheduleView[];
  nextCursor?: string;
}

/** Compare-and-set attempts before a write gives up (only a storm of writes to one schedule gets there). */
const casAttempts = 8;
/** Due schedules one pass reads at a time. */
const duePage = 100;

export class ScheduleService {
  private readonly store: ScheduleStore;
  private readonly clock: Clock;
  /** Told when a write may have made a run due sooner than the loop's timer (scheduler.ts). */
  private readonly changeListeners = new Set<() => void>();

  constructor(private readonly deps: ScheduleServiceDeps) {
    this.store = deps.store;
    this.clock = deps.clock;
  }

  /**
   * The schedules of one account ("" is the server's own: ScheduleRecord.account), whose runs go
   * to that account's queues. What a token of that account works through.
   */
  forAccount(account: string): AccountSchedules {
    return new AccountSchedules(this, account);
  }

  /** Every method below names the account its schedule names resolve in. */
  async put(account: string, name: string, input: ScheduleInput): Promise<{ view: ScheduleView; created: boolean }> {
    const { definition, times } = validateScheduleInput(name, input, this.deps.cron);
    const result = await this.update(account, name, (current, nowMs) => {
      if (!current) {
        return { ...ownerOf(account), name, ...definition, paused: false, nextRunAtMs: times.nextAfter(nowMs), createdAtMs: nowMs, updatedAtMs: nowMs, version: 1 };
      }
      // The same run times: a run due but not fired yet stays due (a PUT that changes nothing moves nothing).
      const sameTimes = current.cron === definition.cron && current.everySeconds === definition.everySeconds && current.timezone === definition.timezone;
      const nextRunAtMs = current.paused ? undefined : sameTimes ? current.nextRunAtMs : times.nextAfter(nowMs);
      return { ...withDefinition(current, definition), nextRunAtMs, updatedAtMs: nowMs, version: current.version + 1 };
    }, true);
    return { view: this.viewOf(result.schedule, times), created: result.created };
  }

  async get(account: string, name: string): Promise<ScheduleView> {
    checkScheduleName(name);
    const schedule = await this.store.scheduleGet({ ...ownerOf(account), name });
    if (!schedule) return notFound(name);
    return this.viewOf(schedule);
  }

  async list(account: string, p: { limit?: number; cursor?: string }): Promise<SchedulePage> {
    const limit = p.limit ?? limits.schedules.listDefault;
    if (!Number.isInteger(limit) || limit < 1 || limit > limits.schedules.listMax) fail("ValidationFailed", `limit must be an integer from 1 to ${limits.schedules.listMax}, got ${limit}.`);
    if (p.cursor !== undefined) checkScheduleName(p.cursor);
    const rows = await this.store.scheduleList({ ...ownerOf(account), afterName: p.cursor, limit: limit + 1 });
    const page = rows.slice(0, limit);
    return { schedules: page.map((s) => this.viewOf(s)), nextCursor: rows.length > limit ? page[page.length - 1]!.name : undefined };
  }

  async delete(account: string, name: string): Promise<void> {
    checkScheduleName(name);
    if (!(await this.store.scheduleDelete({ ...ownerOf(account), name }))) notFound(name);
  }

  /** No run submits a job while paused; runs due meanwhile are skipped (resume starts after now). */
  async pause(account: string, name: string): Promise<ScheduleView> {
    checkScheduleName(name);
    const { schedule } = await this.update(account, name, (current, nowMs) =>
      current!.paused ? undefined : { ...current!, paused: true, nextRunAtMs: undefined, updatedAtMs: nowMs, version: current!.version + 1 },
    );
    return this.viewOf(schedule);
  }

  async resume(account: string, name: string): Promise<ScheduleView> {
    checkScheduleName(name);
    const { schedule } = await this.update(account, name, (current, nowMs) =>
      current!.paused ? { ...current!, paused: false, nextRunAtMs: this.timesOf(current!).nextAfter(nowMs), updatedAtMs: nowMs, version: current!.version + 1 } : undefined,
    );
    return this.viewOf(schedule);
  }

  /** One pass of the scheduler: every due schedule fires (its runs' jobs, as catchUp says). Answers the jobs created. */
  async runDue(): Promise<number> {
    let created = 0;
    for (;;) {
      const nowMs = this.clock.nowMs();
      const due = await this.store.scheduleListDue({ nowMs, limit: duePage });
      for (const schedule of due) created += await this.fire(schedule, nowMs);
      if (due.length < duePage) return created;
    }
  }

  nextDueAtMs(): Promise<number | undefined> {
    return this.store.scheduleNextDueAt();
  }

  /** `listener` is called after a write that may have made a run due sooner (the scheduler re-arms). */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private async fire(schedule: ScheduleRecord, nowMs: number): Promise<number> {
    const plan = planDueRuns({ nextRunAtMs: schedule.nextRunAtMs!, nowMs, catchUp: schedule.catchUp, times: this.timesOf(schedule) });
    const lastRunAtMs = plan.runs.length > 0 ? plan.runs[plan.runs.length - 1] : schedule.lastRunAtMs;
    const next: ScheduleRecord = { ...schedule, nextRunAtMs: plan.nextRunAtMs, lastRunAtMs, updatedAtMs: nowMs, version: schedule.version + 1 };
    let items: JobCreateItem[];
    try {
      items = plan.runs.length === 0 ? [] : await this.deps.runs.itemsFor(schedule, plan.runs, nowMs);
      const result = await this.store.scheduleFire({ schedule: next, expectedVersion: schedule.version, items, nowMs });
      // Not fired: another node (or a write to the schedule) got there first; the next pass re-reads it.
      if (!result.fired) return 0;
      this.deps.runs.created(result.results);
      return result.results.filter((r) => r.created).length;
    } catch (err) {
      this.deps.onFireError?.(err, schedule);
      return 0;
    }
  }

  /**
   * Reads, decides, writes if nobody wrote in between; again if someone did. `decide` answers
   * undefined to write nothing (the schedule already is so). `create`: a missing schedule is
   * decide's to make; otherwise it is ScheduleNotFound.
   */
  private async update(
    account: string,
    name: string,
    decide: (current: ScheduleRecord | undefined, nowMs: number) => ScheduleRecord | undefined,
    create = false,
  ): Promise<{ schedule: ScheduleRecord; created: boolean }> {
    let current = await this.store.scheduleGet({ ...ownerOf(account), name });
    for (let attempt = 0; attempt < casAttempts; attempt++) {
      if (!current && !create) return notFound(name);
      const next = decide(current, this.clock.nowMs());
      if (!next) return { schedule: current!, created: false };
      const result = await this.store.scheduleWrite({ schedule: next, expectedVersion: current?.version });
      if (result.written) {
        for (const listener of this.changeListeners) listener();
        return { schedule: next, created: current === undefined };
      }
      current = result.current;
    }
    return fail("InternalError", `Schedule ${name} changed under ${casAttempts} writes in a row; try again.`);
  }

  private timesOf(schedule: ScheduleRecord): RunTimes {
    return schedule.cron !== undefined ? this.deps.cron(schedule.cron, schedule.timezone) : everySecondsRunTimes(schedule.everySeconds!);
  }

  private viewOf(schedule: ScheduleRecord, times?: RunTimes): ScheduleView {
    if (schedule.paused || schedule.nextRunAtMs === undefined) return { schedule, nextRuns: [] };
    return { schedule, nextRuns: upcomingRuns(times ?? this.timesOf(schedule), schedule.nextRunAtMs, limits.schedules.nextRunsShown) };
  }
}

/** One account's schedules: names resolve there. Holds nothing of its own but which account. */
export class AccountSchedules {
  constructor(
    readonly service: ScheduleService,
    readonly account: string,
  ) {}

  put(name: string, input: ScheduleInput): Promise<{ view: ScheduleView; created: boolean }> {
    return this.service.put(this.account, name, input);
  }

  get(name: string): Promise<ScheduleView> {
    return this.service.get(this.account, name);
  }

  list(p: { limit?: number; cursor?: string }): Promise<SchedulePage> {
    return this.service.list(this.account, p);
  }

  delete(name: string): Promise<void> {
    return this.service.delete(this.account, name);
  }

  pause(name: string): Promise<ScheduleView> {
    return this.service.pause(this.account, name);
  }

  resume(name: string): Promise<ScheduleView> {
    return this.service.resume(this.account, name);
  }
}

/** The store's selector for an account's schedules. */
function ownerOf(account: string): { account?: string } {
  return account === "" ? {} : { account };
}

function withDefinition(current: ScheduleRecord, d: ScheduleDefinition): ScheduleRecord {
  // cron and everySeconds replace each other: the one not given is cleared.
  return { ...current, ...d, cron: d.cron, everySeconds: d.everySeconds };
}

function notFound(name: string): never {
  throw new SluiceError("ScheduleNotFound", `Schedule ${name} does not exist.`);
}
