/** Queue names, configuration and the record a store keeps for each queue. */
import { type QueueRangeField, fail } from "./errors.js";
import { limits } from "./limits.js";

/** Where a queue's messages go after maxReceiveCount receives. Queues by name: ARNs are the SQS layer's. */
export interface RedrivePolicy {
  deadLetterQueueName: string;
  maxReceiveCount: number;
}

/** Which queues may use this one as their dead-letter queue (with byQueue: those named). */
export interface RedriveAllowPolicy {
  redrivePermission: "allowAll" | "denyAll" | "byQueue";
  sourceQueueNames?: string[];
}

/** Everything a queue can be configured with. Units last in names. */
export interface QueueConfig {
  visibilityTimeoutSeconds: number;
  delaySeconds: number;
  messageRetentionPeriodSeconds: number;
  maximumMessageSizeBytes: number;
  receiveMessageWaitTimeSeconds: number;
  fifoQueue: boolean;
  contentBasedDeduplication: boolean;
  deduplicationScope: "queue" | "messageGroup";
  fifoThroughputLimit: "perQueue" | "perMessageGroupId";
  redrivePolicy?: RedrivePolicy;
  redriveAllowPolicy?: RedriveAllowPolicy;
  /** Stored and returned; Sluice encrypts nothing (see docs/sqs-compatibility.md). */
  kmsMasterKeyId?: string;
  kmsDataKeyReusePeriodSeconds: number;
  sqsManagedSseEnabled: boolean;
  policy?: string;
  /** Sluice extension: priority for messages that don't name one (0–9). */
  defaultPriority: number;
  /**
   * Sluice extension: while true, receives and job leases return nothing (long polls keep waiting
   * and are answered on resume); sends and submits go on.
   */
  paused?: boolean;
}

export function defaultQueueConfig(fifoQueue: boolean): QueueConfig {
  return {
    visibilityTimeoutSeconds: limits.visibilityTimeoutDefaultSeconds,
    delaySeconds: 0,
    messageRetentionPeriodSeconds: limits.retentionDefaultSeconds,
    maximumMessageSizeBytes: limits.messageSizeMaxBytes,
    receiveMessageWaitTimeSeconds: 0,
    fifoQueue,
    contentBasedDeduplication: false,
    deduplicationScope: "queue",
    fifoThroughputLimit: "perQueue",
    kmsDataKeyReusePeriodSeconds: 300,
    sqsManagedSseEnabled: true,
    defaultPriority: 0,
  };
}

export interface QueueRecord {
  id: number;
  /**
   * The account the queue belongs to; its name is unique within it. "" is the server's own
   * account (--account-id), whatever id that is: queues made before accounts existed are its.
   */
  account: string;
  name: string;
  config: QueueConfig;
  tags: Record<string, string>;
  createdAtMs: number;
  updatedAtMs: number;
  /** When the queue was last purged (for PurgeQueueInProgress). */
  purgedAtMs?: number;
}

const queueNamePattern = /^[A-Za-z0-9_-]+$/;

export function isFifoName(name: string): boolean {
  return name.endsWith(".fifo");
}

/** Validates a queue name as SQS takes them: 1–80 chars of [A-Za-z0-9_-], FIFO names end in `.fifo`. */
export function validateQueueName(name: string, fifoQueue: boolean): void {
  const base = fifoQueue ? name.slice(0, -".fifo".length) : name;
  const shown = JSON.stringify(name);
  if (fifoQueue && !isFifoName(name)) fail("InvalidParameterValue", `A FIFO queue's name ends in ".fifo", got ${shown}.`, { kind: "queueName", problem: "fifoSuffixMissing" });
  if (!fifoQueue && isFifoName(name)) fail("InvalidParameterValue", `Only a FIFO queue's name ends in ".fifo", got ${shown}.`, { kind: "queueName", problem: "fifoSuffixOnStandard" });
  if (name.length < 1 || name.length > limits.queueNameMaxLength || base.length < 1 || !queueNamePattern.test(base)) {
    fail("InvalidParameterValue", `A queue name is 1 to ${limits.queueNameMaxLength} characters: letters, digits, '-' and '_' (a FIFO queue's then ".fifo"), got ${shown}.`, {
      kind: "queueName",
      problem: "characters",
    });
  }
}

function checkRange(field: QueueRangeField, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    fail("InvalidAttributeValue", `${field} must be an integer from ${min} to ${max}, got ${value}.`, { kind: "queueConfigRange", field, value, min, max });
  }
}

/** Checks the bounds of every numeric field. */
export function validateQueueConfig(config: QueueConfig): void {
  checkRange("visibilityTimeoutSeconds", config.visibilityTimeoutSeconds, 0, limits.visibilityTimeoutMaxSeconds);
  checkRange("delaySeconds", config.delaySeconds, 0, limits.delayMaxSeconds);
  checkRange("messageRetentionPeriodSeconds", config.messageRetentionPeriodSeconds, limits.retentionMinSeconds, limits.retentionMaxSeconds);
  checkRange("maximumMessageSizeBytes", config.maximumMessageSizeBytes, limits.messageSizeMinBytes, limits.messageSizeMaxBytes);
  checkRange("receiveMessageWaitTimeSeconds", config.receiveMessageWaitTimeSeconds, 0, limits.waitTimeMaxSeconds);
  checkRange("kmsDataKeyReusePeriodSeconds", config.kmsDataKeyReusePeriodSeconds, 60, 86_400);
  checkRange("defaultPriority", config.defaultPriority, limits.priorityMin, limits.priorityMax);
  if (config.redrivePolicy) {
    checkRange("redrivePolicy.maxReceiveCount", config.redrivePolicy.maxReceiveCount, 1, limits.redriveMaxReceiveCountMax);
  }
}
