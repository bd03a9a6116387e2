/**
 * The running state as a config document (GET /v1/config, `sluice config export`): every
 * account's queues and schedules in name order, each field in a fixed order and left out when
 * it has its default, so that applying an export to an empty server and exporting again gives
 * the same bytes. SQS attributes a file can't declare (Policy, RedriveAllowPolicy, KMS) are not
 * in it.
 */
import {
  type AccountQueues,
  type AccountSchedules,
  type JobService,
  type QueueRecord,
  type QueueService,
  type ScheduleRecord,
  type ScheduleService,
  defaultCatchUp,
  defaultJobQueueSettings,
  defaultQueueConfig,
} from "../../core/index.js";
import { jobSettingFields, queueAttributeFields } from "./config-model.js";

export type ExportedDocument = Record<string, unknown>;

const page = 1000;
const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

async function queuesOf(queues: AccountQueues): Promise<QueueRecord[]> {
  const out: QueueRecord[] = [];
  let afterName: string | undefined;
  for (;;) {
    const p = await queues.listQueues({ maxResults: page, afterName });
    out.push(...p.queues);
    if (!p.hasMore) return out.sort(byName);
    afterName = p.queues[p.queues.length - 1]!.name;
  }
}

async function schedulesOf(schedules: AccountSchedules): Promise<ScheduleRecord[]> {
  const out: ScheduleRecord[] = [];
  let cursor: string | undefined;
  do {
    const p = await schedules.list({ limit: page, cursor });
    out.push(...p.schedules.map((v) => v.schedule));
    cursor = p.nextCursor;
  } while (cursor !== undefined);
  return out.sort(byName);
}

async function queueEntry(queue: QueueRecord, jobs: JobService): Promise<Record<string, unknown>> {
  const entry: Record<string, unknown> = {};
  const defaults = defaultQueueConfig(queue.config.fifoQueue);
  for (const field of queueAttributeFields) if (queue.config[field] !== defaults[field]) entry[field] = queue.config[field];
  const policy = queue.config.redrivePolicy;
  if (policy) entry.redrivePolicy = { deadLetterQueue: policy.deadLetterQueueName, maxReceiveCount: policy.maxReceiveCount };
  const tagKeys = Object.keys(queue.tags).sort();
  if (tagKeys.length > 0) entry.tags = Object.fromEntries(tagKeys.map((k) => [k, queue.tags[k]]));
  if (queue.config.paused === true) entry.paused = true;
  const settings = (await jobs.jobQueues.policyOf(queue)).settings;
  const changed: Record<string, unknown> = {};
  for (const field of jobSettingFields) {
    const value = field === "backoff" ? { baseSeconds: settings.backoff.baseSeconds, capSeconds: settings.backoff.capSeconds } : settings[field];
    if (value !== undefined && JSON.stringify(value) !== JSON.stringify(defaultJobQueueSettings[field])) changed[field] = value;
  }
  if (Object.keys(changed).length > 0) entry.jobs = changed;
  return entry;
}

function scheduleEntry(s: ScheduleRecord): Record<string, unknown> {
  const entry: Record<string, unknown> = { queue: s.queueName };
  if (s.cron !== undefined) entry.cron = s.cron;
  else entry.everySeconds = s.everySeconds;
  if (s.timezone !== "UTC") entry.timezone = s.timezone;
  const input = JSON.parse(s.inputJson) as unknown;
  if (input !== null) entry.input = input;
  const options = JSON.parse(s.optionsJson) as Record<string, unknown>;
  if (Object.keys(options).length > 0) entry.options = options;
  if (s.catchUp !== defaultCatchUp) entry.catchUp = s.catchUp;
  if (s.paused) entry.paused = true;
  return entry;
}

async function sectionOf(account: string, services: { queues: QueueService; jobs: JobService; schedules: ScheduleService }): Promise<Record<string, unknown>> {
  const section: Record<string, unknown> = {};
  const queues = await queuesOf(services.queues.forAccount(account));
  if (queues.length > 0) {
    const entries: Record<string, unknown> = {};
    for (const q of queues) entries[q.name] = await queueEntry(q, services.jobs);
    section.queues = entries;
  }
  const schedules = await schedulesOf(services.schedules.forAccount(account));
  if (schedules.length > 0) section.schedules = Object.fromEntries(schedules.map((s) => [s.name, scheduleEntry(s)]));
  return section;
}

/** Every account with a queue; the server's own at the top level, the others under `accounts` by id. */
export async function exportDeclaredConfig(services: { queues: QueueService; jobs: JobService; schedules: ScheduleService }): Promise<ExportedDocument> {
  const doc = await sectionOf("", services);
  const others = (await services.queues.listAccounts()).filter((a) => a !== "").sort();
  const accounts: Record<string, unknown> = {};
  for (const account of others) {
    const section = await sectionOf(account, services);
    if (Object.keys(section).length > 0) accounts[account] = section;
  }
  if (Object.keys(accounts).length > 0) doc.accounts = accounts;
  return doc;
}
