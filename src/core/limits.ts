/**
 * Every bound Sluice enforces, in one table. Values follow SQS as of 2025
 * (1 MiB messages, see docs/sqs-compatibility.md).
 */
export const limits = {
  queueNameMaxLength: 80,
  messageSizeMaxBytes: 1_048_576,
  messageSizeMinBytes: 1_024,
  batchSizeMaxBytes: 1_048_576,
  batchEntriesMax: 10,
  batchEntryIdMaxLength: 80,
  receiveMaxMessages: 10,
  visibilityTimeoutMaxSeconds: 43_200,
  visibilityTimeoutDefaultSeconds: 30,
  retentionMinSeconds: 60,
  retentionMaxSeconds: 1_209_600,
  retentionDefaultSeconds: 345_600,
  delayMaxSeconds: 900,
  waitTimeMaxSeconds: 20,
  messageAttributesMax: 10,
  messageAttributeNameMaxLength: 256,
  listQueuesMaxResults: 1000,
  tagsPerQueueMax: 50,
  tagKeyMaxLength: 128,
  tagValueMaxLength: 256,
  /** SQS keeps FIFO deduplication ids for five minutes. */
  dedupWindowMs: 5 * 60_000,
  /** A queue's name can't be reused for 60 s after DeleteQueue; PurgeQueue can run once per 60 s. */
  queueRecreateCooldownMs: 60_000,
  purgeCooldownMs: 60_000,
  priorityMin: 0,
  priorityMax: 9,
} as const;
