/**
 * Applies a checked config to the running state through core's services, idempotently: first a
 * plan, made of reads only, that checks everything the file alone could not (dead-letter queues
 * that exist, queue types that can't change, the settings a queue would end with); then the
 * writes — dead-letter queues before the queues that name them, then schedules, then (with
 * `prune`) deletions. A plan that fails writes nothing.
 */
import {
  type AccountQueues,
  type AccountSchedules,
  type JobQueueSettings,
  type JobQueueSettingsPatch,
  type JobService,
  type QueueConfig,
  type QueueRecord,
  type QueueService,
  type ScheduleRecord,
  type ScheduleService,
  SluiceError,
  applySettingsPatch,
  defaultJobQueueSettings,
  defaultQueueConfig,
  validateQueueConfig,
  validateScheduleInput,
} from "../../core/index.js";
import { cronCompiler } from "../cron.js";
import type { DeclaredConfig, DeclaredQueue, DeclaredSchedule, DeclaredSection } from "./config-model.js";
import { jobSettingFields, nullableJobSettings, queueAttributeFields } from "./config-model.js";
import { DeclaredConfigError, type FieldPath, describeAt } from "./config-source.js";

export interface ApplyServices {
  queues: QueueService;
  jobs: JobService;
  schedules: ScheduleService;
}

/** What an apply did, counted over every account. */
export interface ApplySummary {
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
}

/** Where the file's errors point (its line numbers, when it is read again). */
export type Locate = (path: FieldPath) => number | undefined;

const listPage = 1000;

interface QueueStep {
  declared: DeclaredQueue;
  existing?: QueueRecord;
  /** The attributes to write: everything for a new queue, what differs for an existing one. */
  patch: Partial<QueueConfig>;
  tags?: { add: Record<string, string>; remove: string[] };
  settings?: JobQueueSettings;
  /** Pause (true) or resume (false) it. */
  pause?: boolean;
}

interface ScheduleStep {
  declared: DeclaredSchedule;
  put: boolean;
  pause?: boolean;
}

interface SectionPlan {
  section: DeclaredSection;
  queues: QueueStep[];
  schedules: ScheduleStep[];
  deleteQueues: string[];
  deleteSchedules: string[];
  unchanged: number;
}

async function allQueues(queues: AccountQueues): Promise<QueueRecord[]> {
  const out: QueueRecord[] = [];
  let afterName: string | undefined;
  for (;;) {
    const page = await queues.listQueues({ maxResults: listPage, afterName });
    out.push(...page.queues);
    if (!page.hasMore) return out;
    afterName = page.queues[page.queues.length - 1]!.name;
  }
}

async function allSchedules(schedules: AccountSchedules): Promise<ScheduleRecord[]> {
  const out: ScheduleRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await schedules.list({ limit: listPage, cursor });
    out.push(...page.schedules.map((v) => v.schedule));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return out;
}

/** Redrive policies compare by their fields, whatever order a store kept them in. */
function sameAttribute(a: QueueConfig[keyof QueueConfig], b: QueueConfig[keyof QueueConfig]): boolean {
  if (typeof a === "object" && typeof b === "object" && "deadLetterQueueName" in a && "deadLetterQueueName" in b) {
    return a.deadLetterQueueName === b.deadLetterQueueName && a.maxReceiveCount === b.maxReceiveCount;
  }
  return a === b;
}

function sameSettings(a: JobQueueSettings, b: JobQueueSettings): boolean {
  return jobSettingFields.every((f) => JSON.stringify(a[f]) === JSON.stringify(b[f]));
}

/** Dead-letter queues before the queues that name them; a cycle among declared queues is an error. */
function inRedriveOrder(declared: DeclaredQueue[], fail: (q: DeclaredQueue, problem: string) => never): DeclaredQueue[] {
  const byName = new Map(declared.map((q) => [q.name, q]));
  const ordered: DeclaredQueue[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (q: DeclaredQueue): void => {
    if (state.get(q.name) === "done") return;
    if (state.get(q.name) === "visiting") fail(q, "the dead-letter queues form a cycle.");
    state.set(q.name, "visiting");
    const dlq = q.attributes.redrivePolicy?.deadLetterQueueName;
    const target = dlq === undefined || dlq === q.name ? undefined : byName.get(dlq);
    if (target) visit(target);
    state.set(q.name, "done");
    ordered.push(q);
  };
  for (const q of [...declared].sort((a, b) => (a.name < b.name ? -1 : 1))) visit(q);
  return ordered;
}

class Planner {
  constructor(
    private readonly file: string,
    private readonly locate: Locate,
  ) {}

  fail(path: FieldPath, problem: string): never {
    throw new DeclaredConfigError(describeAt(this.file, this.locate(path), path, problem));
  }

  async plan(section: DeclaredSection, s: ApplyServices): Promise<SectionPlan> {
    const queues = s.queues.forAccount(section.account);
    const jobs = s.jobs.forAccount(section.account);
    const schedules = s.schedules.forAccount(section.account);
    const queuePath = (q: DeclaredQueue, ...more: string[]): FieldPath => [...section.path, "queues", q.name, ...more];
    const existingQueues = new Map((await allQueues(queues)).map((q) => [q.name, q]));
    const declaredNames = new Set(section.queues.map((q) => q.name));
    const plan: SectionPlan = { section, queues: [], schedules: [], deleteQueues: [], deleteSchedules: [], unchanged: 0 };
    if (section.prune) plan.deleteQueues = [...existingQueues.keys()].filter((n) => !declaredNames.has(n)).sort();

    for (const declared of inRedriveOrder(section.queues, (q, problem) => this.fail(queuePath(q, "redrivePolicy"), problem))) {
      const existing = existingQueues.get(declared.name);
      if (existing && existing.config.fifoQueue !== declared.fifo) {
        this.fail(queuePath(declared), `${declared.name} exists as a ${existing.config.fifoQueue ? "FIFO" : "standard"} queue; a queue's type can't change.`);
      }
      const dlq = declared.attributes.redrivePolicy?.deadLetterQueueName;
      if (dlq === declared.name) this.fail(queuePath(declared, "redrivePolicy", "deadLetterQueue"), "a queue can't be its own dead-letter queue.");
      if (dlq !== undefined) {
        const target = section.queues.find((q) => q.name === dlq) ?? (plan.deleteQueues.includes(dlq) ? undefined : existingQueues.get(dlq));
        const targetFifo = target === undefined ? undefined : "fifo" in target ? target.fifo : target.config.fifoQueue;
        if (targetFifo === undefined) this.fail(queuePath(declared, "redrivePolicy", "deadLetterQueue"), `the dead-letter queue ${dlq} is neither declared in this file nor kept on the server.`);
        if (targetFifo !== declared.fifo) this.fail(queuePath(declared, "redrivePolicy", "deadLetterQueue"), `the dead-letter queue ${dlq} must be a ${declared.fifo ? "FIFO" : "standard"} queue, as ${declared.name} is.`);
      }
      const current = existing?.config ?? defaultQueueConfig(declared.fifo);
      const target: QueueConfig = { ...current, ...declared.attributes };
      for (const field of [...queueAttributeFields, "redrivePolicy"] as const) {
        if (field in declared.attributes) this.catching(queuePath(declared, field), () => validateQueueConfig({ ...current, [field]: target[field] }));
      }
      const patch: Partial<QueueConfig> = {};
      for (const field of [...queueAttributeFields, "redrivePolicy"] as const) {
        if (field in declared.attributes && !sameAttribute(current[field], target[field])) Object.assign(patch, { [field]: target[field] });
      }
      const step: QueueStep = { declared, existing, patch };
      if (declared.tags) {
        const have = existing?.tags ?? {};
        const add = Object.fromEntries(Object.entries(declared.tags).filter(([k, v]) => have[k] !== v));
        const remove = Object.keys(have).filter((k) => !(k in declared.tags!));
        if (Object.keys(add).length > 0 || remove.length > 0) step.tags = { add, remove };
      }
      if (declared.jobs) {
        const have = existing ? (await jobs.service.jobQueues.policyOf(existing)).settings : defaultJobQueueSettings;
        const patchJobs = declared.jobs;
        const want = this.catching(queuePath(declared, "jobs"), () => applySettingsPatch(have, patchJobs));
        if (!sameSettings(have, want)) step.settings = want;
      }
      if (declared.paused !== undefined && declared.paused !== (existing?.config.paused === true)) step.pause = declared.paused;
      if (!existing || Object.keys(patch).length > 0 || step.tags || step.settings || step.pause !== undefined) plan.queues.push(step);
      else plan.unchanged++;
    }

    const existingSchedules = new Map((await allSchedules(schedules)).map((r) => [r.name, r]));
    const declaredSchedules = new Set(section.schedules.map((d) => d.name));
    if (section.prune) plan.deleteSchedules = [...existingSchedules.keys()].filter((n) => !declaredSchedules.has(n)).sort();
    for (const declared of section.schedules) {
      const at: FieldPath = [...section.path, "schedules", declared.name];
      const { definition } = this.catching(at, () => validateScheduleInput(declared.name, declared.input, cronCompiler));
      const record = existingSchedules.get(declared.name);
      const same =
        record !== undefined &&
        record.queueName === definition.queueName &&
        record.cron === definition.cron &&
        record.everySeconds === definition.everySeconds &&
        record.timezone === definition.timezone &&
        record.inputJson === definition.inputJson &&
        record.optionsJson === definition.optionsJson &&
        record.catchUp === definition.catchUp;
      const pausedNow = record?.paused ?? false;
      const step: ScheduleStep = { declared, put: !same };
      if (declared.paused !== undefined && declared.paused !== pausedNow) step.pause = declared.paused;
      if (step.put || step.pause !== undefined) plan.schedules.push(step);
      else plan.unchanged++;
    }
    return plan;
  }

  private catching<T>(path: FieldPath, run: () => T): T {
    try {
      return run();
    } catch (err) {
      if (err instanceof SluiceError) this.fail(path, err.message);
      throw err;
    }
  }
}

/** True when the delete happened, false when the thing was gone already. */
async function unlessGone(deleting: Promise<void>, code: string): Promise<boolean> {
  try {
    await deleting;
    return true;
  } catch (err) {
    if (err instanceof SluiceError && err.code === code) return false;
    throw err;
  }
}

/** Whole settings as a patch: a limit they leave out is cleared (null), not kept. */
function asPatch(settings: JobQueueSettings): JobQueueSettingsPatch {
  const patch: JobQueueSettingsPatch = { ...settings };
  for (const field of nullableJobSettings) if (settings[field] === undefined) patch[field] = null;
  return patch;
}

async function execute(plan: SectionPlan, s: ApplyServices, summary: ApplySummary): Promise<void> {
  const account = plan.section.account;
  const queues = s.queues.forAccount(account);
  const jobs = s.jobs.forAccount(account);
  const schedules = s.schedules.forAccount(account);
  for (const step of plan.queues) {
    const { name } = step.declared;
    if (!step.existing) {
      await queues.createQueue({ name, config: { ...step.patch, fifoQueue: step.declared.fifo }, tags: step.declared.tags });
    } else {
      if (Object.keys(step.patch).length > 0) await queues.updateQueueConfig(name, step.patch);
      if (step.tags && Object.keys(step.tags.add).length > 0) await queues.tagQueue(name, step.tags.add);
      if (step.tags && step.tags.remove.length > 0) await queues.untagQueue(name, step.tags.remove);
    }
    if (step.settings) await jobs.updateQueueSettings(name, asPatch(step.settings));
    if (step.pause !== undefined) await queues.setPaused(name, step.pause);
    if (step.existing) summary.updated++;
    else summary.created++;
  }
  for (const step of plan.schedules) {
    const { name } = step.declared;
    let created = false;
    if (step.put) created = (await schedules.put(name, step.declared.input)).created;
    if (step.pause === true) await schedules.pause(name);
    if (step.pause === false) await schedules.resume(name);
    if (created) summary.created++;
    else summary.updated++;
  }
  // Gone already is as good as deleted: every node of a cluster may apply the same file at once.
  for (const name of plan.deleteSchedules) {
    if (await unlessGone(schedules.delete(name), "ScheduleNotFound")) summary.deleted++;
  }
  for (const name of plan.deleteQueues) {
    if (await unlessGone(queues.deleteQueue(name), "QueueNotFound")) summary.deleted++;
  }
  summary.unchanged += plan.unchanged;
}

/**
 * Plans every account's section, then writes. Throws DeclaredConfigError when the plan fails
 * (nothing written); a write refused midway (a queue deleted less than 60 s ago, say) throws
 * the service's error, the writes before it kept.
 */
export async function applyDeclaredConfig(config: DeclaredConfig, services: ApplyServices, locate: Locate): Promise<ApplySummary> {
  const planner = new Planner(config.file, locate);
  const plans: SectionPlan[] = [];
  for (const section of config.sections) plans.push(await planner.plan(section, services));
  const summary: ApplySummary = { created: 0, updated: 0, deleted: 0, unchanged: 0 };
  for (const plan of plans) await execute(plan, services, summary);
  return summary;
}
