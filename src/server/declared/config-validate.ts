/**
 * Checks a parsed config file whole, before anything is applied: its shape (no unknown field),
 * names and ranges — with core's own validators, so a file is held to the API's rules. The
 * first problem is a DeclaredConfigError naming the file, line and field.
 */
import {
  type JobQueueSettingsPatch,
  type ScheduleInput,
  SluiceError,
  applySettingsPatch,
  defaultJobQueueSettings,
  defaultQueueConfig,
  isFifoName,
  limits,
  validateQueueConfig,
  validateQueueName,
  validateScheduleInput,
} from "../../core/index.js";
import { checkTags } from "../../protocols/sqs/tag-rules.js";
import { cronCompiler } from "../cron.js";
import { type DeclaredAttributes, type DeclaredConfig, type DeclaredQueue, type DeclaredSchedule, type DeclaredSection, jobSettingFields, nullableJobSettings, queueAttributeFields, scheduleFields } from "./config-model.js";
import { type ConfigSource, DeclaredConfigError, type FieldPath, describeAt } from "./config-source.js";

type Table = Record<string, unknown>;

const accountIdPattern = /^\d{12}$/;

function isTable(value: unknown): value is Table {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

class Checker {
  constructor(private readonly source: ConfigSource) {}

  fail(path: FieldPath, problem: string): never {
    throw new DeclaredConfigError(describeAt(this.source.file, this.source.lineOf(path), path, problem));
  }

  /** Runs a core validator; its error becomes this field's. */
  core<T>(path: FieldPath, run: () => T): T {
    try {
      return run();
    } catch (err) {
      if (err instanceof SluiceError) this.fail(path, err.message);
      throw err;
    }
  }

  table(value: unknown, path: FieldPath, allowed: readonly string[], what: string): Table {
    if (!isTable(value)) this.fail(path, `must be a table of ${what}.`);
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) this.fail([...path, key], `unknown field (expected ${allowed.join(", ")}).`);
    }
    return value;
  }

  boolean(value: unknown, path: FieldPath): boolean {
    if (typeof value !== "boolean") this.fail(path, "must be true or false.");
    return value;
  }

  integer(value: unknown, path: FieldPath): number {
    if (typeof value !== "number" || !Number.isInteger(value)) this.fail(path, `must be an integer, got ${JSON.stringify(value)}.`);
    return value;
  }
}

function checkAttributes(c: Checker, entry: Table, path: FieldPath, fifo: boolean): DeclaredAttributes {
  const attributes: DeclaredAttributes = {};
  for (const field of queueAttributeFields) {
    const value = entry[field];
    if (value === undefined) continue;
    if (field === "contentBasedDeduplication") {
      if (!fifo) c.fail([...path, field], "applies to FIFO queues only.");
      attributes.contentBasedDeduplication = c.boolean(value, [...path, field]);
      continue;
    }
    const n = c.integer(value, [...path, field]);
    c.core([...path, field], () => validateQueueConfig({ ...defaultQueueConfig(fifo), [field]: n }));
    attributes[field] = n;
  }
  const policy = entry.redrivePolicy;
  if (policy === null) attributes.redrivePolicy = undefined;
  else if (policy !== undefined) {
    const at = [...path, "redrivePolicy"];
    const p = c.table(policy, at, ["deadLetterQueue", "maxReceiveCount"], "deadLetterQueue and maxReceiveCount");
    if (typeof p.deadLetterQueue !== "string") c.fail([...at, "deadLetterQueue"], "must be the name of a queue.");
    const dlq = p.deadLetterQueue;
    c.core([...at, "deadLetterQueue"], () => validateQueueName(dlq, fifo));
    const maxReceiveCount = c.integer(p.maxReceiveCount, [...at, "maxReceiveCount"]);
    const redrivePolicy = { deadLetterQueueName: dlq, maxReceiveCount };
    c.core([...at, "maxReceiveCount"], () => validateQueueConfig({ ...defaultQueueConfig(fifo), redrivePolicy }));
    attributes.redrivePolicy = redrivePolicy;
  }
  return attributes;
}

function checkJobSettings(c: Checker, value: unknown, path: FieldPath): JobQueueSettingsPatch {
  const t = c.table(value, path, jobSettingFields, "job settings");
  const patch: Record<string, unknown> = {};
  for (const field of jobSettingFields) {
    const v = t[field];
    if (v === undefined) continue;
    const at = [...path, field];
    if (field === "backoff") {
      const b = c.table(v, at, ["baseSeconds", "capSeconds"], "baseSeconds and capSeconds");
      const backoff: Record<string, number> = {};
      for (const k of ["baseSeconds", "capSeconds"] as const) if (b[k] !== undefined) backoff[k] = c.integer(b[k], [...at, k]);
      // Each bound alone against the defaults; the two together only when both are given (the other may be the queue's own).
      for (const k of Object.keys(backoff)) {
        const probe = { baseSeconds: 0, capSeconds: limits.jobs.retryDelayMaxSeconds, [k]: backoff[k] };
        c.core([...at, k], () => applySettingsPatch(defaultJobQueueSettings, { backoff: probe }));
      }
      if (backoff.baseSeconds !== undefined && backoff.capSeconds !== undefined) c.core(at, () => applySettingsPatch(defaultJobQueueSettings, { backoff }));
      patch.backoff = backoff;
      continue;
    }
    if (v === null && (nullableJobSettings as readonly string[]).includes(field)) {
      patch[field] = null;
      continue;
    }
    const n = c.integer(v, at);
    c.core(at, () => applySettingsPatch(defaultJobQueueSettings, { [field]: n }));
    patch[field] = n;
  }
  return patch as JobQueueSettingsPatch;
}

const queueFields = ["fifo", ...queueAttributeFields, "redrivePolicy", "tags", "paused", "jobs"];

function checkQueue(c: Checker, name: string, value: unknown, path: FieldPath): DeclaredQueue {
  const entry = value === null ? {} : c.table(value, path, queueFields, "queue attributes");
  const fifo = entry.fifo === undefined ? isFifoName(name) : c.boolean(entry.fifo, [...path, "fifo"]);
  c.core(path, () => validateQueueName(name, fifo));
  const queue: DeclaredQueue = { name, fifo, attributes: checkAttributes(c, entry, path, fifo) };
  if (entry.tags !== undefined) {
    const at = [...path, "tags"];
    if (!isTable(entry.tags)) c.fail(at, "must be a table of tag keys and their string values.");
    for (const [k, v] of Object.entries(entry.tags)) if (typeof v !== "string") c.fail([...at, k], "a tag's value must be a string.");
    const tags = entry.tags as Record<string, string>;
    c.core(at, () => checkTags(tags));
    if (Object.keys(tags).length > limits.tagsPerQueueMax) c.fail(at, `a queue has at most ${limits.tagsPerQueueMax} tags.`);
    queue.tags = { ...tags };
  }
  if (entry.paused !== undefined) queue.paused = c.boolean(entry.paused, [...path, "paused"]);
  if (entry.jobs !== undefined) queue.jobs = checkJobSettings(c, entry.jobs, [...path, "jobs"]);
  return queue;
}

/** The field a schedule validator's message is about (they start with it), else the schedule itself. */
function scheduleFieldOf(message: string): string | undefined {
  const field = /^(queue|cron|everySeconds|timezone|catchUp|input|options)\b/.exec(message)?.[1];
  return field ?? (/priority|maxAttempts|timeoutSeconds|webhook|metadata|tenant/.test(message) ? "options" : undefined);
}

function checkSchedule(c: Checker, name: string, value: unknown, path: FieldPath): DeclaredSchedule {
  const entry = c.table(value, path, scheduleFields, "schedule fields");
  const { paused, input, ...rest } = entry;
  // A file may leave the input out: every job gets null.
  const spec = { ...rest, input: input === undefined ? null : input } as unknown as ScheduleInput;
  try {
    validateScheduleInput(name, spec, cronCompiler);
  } catch (err) {
    if (!(err instanceof SluiceError)) throw err;
    const field = scheduleFieldOf(err.message);
    c.fail(field === undefined || entry[field] === undefined ? path : [...path, field], err.message);
  }
  const schedule: DeclaredSchedule = { name, input: spec };
  if (paused !== undefined) schedule.paused = c.boolean(paused, [...path, "paused"]);
  return schedule;
}

function checkSection(c: Checker, value: unknown, path: string[], account: string, allowed: readonly string[]): DeclaredSection {
  const t = c.table(value, path, allowed, allowed.join(", "));
  const section: DeclaredSection = { account, path, queues: [], schedules: [], prune: false };
  if (t.prune !== undefined) section.prune = c.boolean(t.prune, [...path, "prune"]);
  if (t.queues !== undefined && t.queues !== null) {
    const queues = c.table(t.queues, [...path, "queues"], Object.keys(t.queues as object), "queues by name");
    for (const [name, q] of Object.entries(queues)) section.queues.push(checkQueue(c, name, q, [...path, "queues", name]));
  }
  if (t.schedules !== undefined && t.schedules !== null) {
    const schedules = c.table(t.schedules, [...path, "schedules"], Object.keys(t.schedules as object), "schedules by name");
    for (const [name, s] of Object.entries(schedules)) section.schedules.push(checkSchedule(c, name, s, [...path, "schedules", name]));
  }
  return section;
}

/**
 * The config a parsed file declares, checked whole. `defaultAccountId` is the server's own
 * account: its queues and schedules go at the top level, not in an `accounts` section.
 */
export function checkDeclaredConfig(source: ConfigSource, defaultAccountId: string): DeclaredConfig {
  const c = new Checker(source);
  const doc = source.value === null || source.value === undefined ? {} : source.value;
  const top = checkSection(c, doc, [], "", ["prune", "queues", "schedules", "accounts"]);
  const sections = [top];
  const accounts = (doc as Table).accounts;
  if (accounts !== undefined && accounts !== null) {
    const t = c.table(accounts, ["accounts"], Object.keys(accounts as object), "accounts by 12-digit id");
    for (const [id, section] of Object.entries(t)) {
      const path = ["accounts", id];
      if (!accountIdPattern.test(id)) c.fail(path, "an account is named by its 12-digit id.");
      if (id === defaultAccountId) c.fail(path, `is the server's own account (--account-id): declare its queues and schedules at the top level.`);
      sections.push(checkSection(c, section, path, id, ["prune", "queues", "schedules"]));
    }
  }
  return { file: source.file, sections };
}
