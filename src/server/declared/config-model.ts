/**
 * What a declarative config file declares, once checked: per account, the queues (their SQS
 * attributes, tags and job settings) and schedules it wants, and whether to prune the rest.
 * A field left out is not managed: a queue that exists keeps its value (a new one gets the default).
 */
import type { JobQueueSettingsPatch, QueueConfig, ScheduleInput } from "../../core/index.js";

/** The SQS attributes a file may set, as core names them (`redrivePolicy: undefined` given = remove it). */
export type DeclaredAttributes = Partial<
  Pick<
    QueueConfig,
    | "visibilityTimeoutSeconds"
    | "delaySeconds"
    | "messageRetentionPeriodSeconds"
    | "maximumMessageSizeBytes"
    | "receiveMessageWaitTimeSeconds"
    | "contentBasedDeduplication"
    | "defaultPriority"
    | "redrivePolicy"
  >
>;

export interface DeclaredQueue {
  name: string;
  fifo: boolean;
  attributes: DeclaredAttributes;
  /** When given, the queue's tags become exactly these. */
  tags?: Record<string, string>;
  jobs?: JobQueueSettingsPatch;
  /** When given, the queue is paused or resumed to match. */
  paused?: boolean;
}

export interface DeclaredSchedule {
  name: string;
  input: ScheduleInput;
  /** When given, the schedule is paused or resumed to match. */
  paused?: boolean;
}

export interface DeclaredSection {
  /** The store's name for the account: "" for the server's own (top level), else its 12-digit id. */
  account: string;
  /** Where the section starts in the file (errors found against the live state point into it). */
  path: ReadonlyArray<string>;
  queues: DeclaredQueue[];
  schedules: DeclaredSchedule[];
  /** Delete this account's queues and schedules that the section does not declare. */
  prune: boolean;
}

export interface DeclaredConfig {
  file: string;
  /** The server's own account first. */
  sections: DeclaredSection[];
}

/** The field names of a queue entry, in the order export writes them. */
export const queueAttributeFields = [
  "visibilityTimeoutSeconds",
  "delaySeconds",
  "messageRetentionPeriodSeconds",
  "maximumMessageSizeBytes",
  "receiveMessageWaitTimeSeconds",
  "contentBasedDeduplication",
  "defaultPriority",
] as const;

export const jobSettingFields = [
  "maxAttempts",
  "backoff",
  "leaseSeconds",
  "timeoutSeconds",
  "resultTtlSeconds",
  "drainTargetSeconds",
  "workerConcurrency",
  "rateLimitPerSecond",
  "maxRunning",
  "maxRunningPerTenant",
  "rateLimitPerTenantPerSecond",
] as const;

/** Settings that may be null in a file (null clears them, as in PUT /v1/queues/{queue}). */
export const nullableJobSettings = ["timeoutSeconds", "rateLimitPerSecond", "maxRunning", "maxRunningPerTenant", "rateLimitPerTenantPerSecond"] as const;

export const scheduleFields = ["queue", "cron", "everySeconds", "timezone", "input", "options", "catchUp", "paused"] as const;
