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
  /** FIFO: MessageGroupId, MessageDeduplicationId and ReceiveRequestAttemptId are 1–128 chars. */
  fifoIdMaxLength: 128,
  /** A retried FIFO receive with the same ReceiveRequestAttemptId returns the same messages for 5 min. */
  receiveAttemptWindowMs: 5 * 60_000,
  redriveMaxReceiveCountMax: 1000,
  /** RedriveAllowPolicy byQueue names 1–10 source queues. */
  redriveAllowSourcesMax: 10,
  listDeadLetterSourceQueuesMaxResults: 1000,
  /** StartMessageMoveTask MaxNumberOfMessagesPerSecond bounds. */
  moveTaskRateMin: 1,
  moveTaskRateMax: 500,
  /** ListMessageMoveTasks MaxResults: default 1 (the latest task), at most 10. */
  listMoveTasksMaxResults: 10,
  /** Messages a move task moves per transaction when it has no rate limit. */
  moveTaskBatchMax: 1_000,
  /** How often a rate-limited move task moves its next second's worth of messages. */
  moveTaskTickMs: 1_000,
  /** AddPermission: Label is 1–80 chars of [A-Za-z0-9_-]; a queue policy holds at most this many. */
  /** Nesting of any JSON a request carries (bodies, job inputs, attributes): checked before parsing. */
  jsonDepthMax: 64,
  permissionLabelMaxLength: 80,
  permissionStatementsMax: 20,
  permissionAccountsMax: 20,
  /** SQS: "a maximum of seven actions per statement" (AddPermission in the API reference). */
  permissionActionsMax: 7,
  /** SQS's policy quotas: a queue policy is at most 8,192 bytes. */
  policyMaxBytes: 8_192,
  /** The admin routes and dashboard (docs/admin-api.md). */
  admin: {
    /** Messages one peek shows. */
    peekMaxMessages: 100,
    peekDefaultMessages: 10,
    /** Queues per page of GET /v1/queues (each with its live stats). */
    listQueuesMaxPage: 100,
    listQueuesDefaultPage: 50,
    /** Throughput history per queue: this many buckets of this many seconds (2 minutes). */
    activityBucketSeconds: 5,
    activityBuckets: 24,
    /** How often a stats event stream sends (seconds). */
    statsIntervalMinSeconds: 1,
    statsIntervalMaxSeconds: 60,
    statsIntervalDefaultSeconds: 2,
  },
  /** The jobs API (docs/jobs-api.md). */
  jobs: {
    maxAttemptsMax: 100,
    leaseMaxJobs: 100,
    /** complete + fail entries one lease request may carry. */
    leaseMaxAcks: 100,
    /** Jobs in one POST /v1/queues/{queue}/jobs/batch. */
    submitBatchMaxJobs: 100,
    leaseWaitMaxSeconds: 20,
    batchWindowMaxMs: 10_000,
    getWaitMaxSeconds: 60,
    delayMaxSeconds: 43_200,
    /** How far ahead a submit's runAt may be. */
    runAtMaxDays: 365,
    timeoutMaxSeconds: 86_400,
    /** Retry delays (backoff cap, retryAfterSeconds) are at most the longest visibility timeout. */
    retryDelayMaxSeconds: 43_200,
    backoffBaseMaxSeconds: 3_600,
    resultTtlMinSeconds: 60,
    resultTtlMaxSeconds: 90 * 86_400,
    idempotencyKeyMaxLength: 255,
    idempotencyKeyTtlDefaultSeconds: 86_400,
    metadataMaxBytes: 16_384,
    errorMessageMaxLength: 8_192,
    errorTypeMaxLength: 256,
    webhookUrlMaxLength: 2_048,
    listMaxJobs: 1_000,
    /** The autoscaling advisor's drain target and worker concurrency settings. */
    drainTargetMaxSeconds: 86_400,
    workerConcurrencyMax: 10_000,
    listDefaultJobs: 100,
    /** Parents one job may name in dependsOn. */
    dependsOnMax: 100,
    /** A submit's `tenant` (fair sharing and per-tenant caps within a queue): 1–128 chars, as a MessageGroupId. */
    tenantMaxLength: 128,
    /** Queue settings rateLimitPerSecond / maxRunning / maxRunningPerTenant. */
    rateLimitPerSecondMax: 100_000,
    maxRunningMax: 1_000_000,
    /** A worker's `labels` and a job's `requires`: at most this many pairs, each key and value bounded. */
    labelPairsMax: 16,
    labelKeyMaxLength: 64,
    labelValueMaxLength: 128,
    /** A lease's `workerId`. */
    workerIdMaxLength: 128,
  },
  /** The OpenAI-compatible Batch API (docs/jobs-api.md, "Batch API"). */
  batches: {
    /** An uploaded file, and the lines of a batch's input file (OpenAI's limits). */
    fileMaxBytes: 200 * 1024 * 1024,
    fileMaxLines: 50_000,
    /** Files are stored in chunks of this size (the last one shorter). */
    fileChunkBytes: 1_048_576,
    /** A line of an input file: a job's input is a message (1 MiB at most). */
    lineMaxBytes: 1_048_576,
    customIdMaxLength: 512,
    /** Validation errors an answer lists (the count of the rest is in the last one's message). */
    errorsShown: 100,
    /** Lines made jobs in one write, and lines of results read at once when finalizing. */
    submitSliceLines: 500,
    resultSliceLines: 500,
    metadataMaxPairs: 16,
    metadataKeyMaxLength: 64,
    metadataValueMaxLength: 512,
    listMax: 100,
    listDefault: 20,
    /** Only the 24 h window exists, as in OpenAI's API. */
    completionWindowSeconds: 86_400,
    /** How long a finalizing node holds a batch before another may take it over. */
    claimMs: 120_000,
  },
  /** Attachments (docs/jobs-api.md, "Attachments"). */
  blobs: {
    /** One upload (S3's single-PUT maximum). */
    maxBytes: 5 * 1024 ** 3,
    /** Input attachments a submit names, and output attachments a complete names. */
    attachmentsMax: 16,
    contentTypeMaxLength: 255,
    /** How long an upload URL and a download URL from GET /v1/blobs/{id} or GET /v1/jobs/{id} stay valid. */
    urlSeconds: 3_600,
    /** A blob nothing references is deleted this long after its upload (or its creation, never uploaded). */
    unreferencedSeconds: 86_400,
    /** After a submit or complete attaches a blob, when the sweep checks that its job exists (a crash between the two leaves none). */
    attachCheckSeconds: 3_600,
    /** Blobs one sweep pass deletes at most. */
    sweepSlice: 100,
  },
  /** Scheduled jobs (docs/jobs-api.md, "Schedules"). */
  schedules: {
    /** Schedule names follow queue names: 1–80 of [A-Za-z0-9_-]. */
    nameMaxLength: 80,
    cronMaxLength: 256,
    timezoneMaxLength: 64,
    everySecondsMax: 366 * 86_400,
    /** A run more than this late counts as missed (the server was down): catchUp decides. */
    missedAfterMs: 60_000,
    /** catchUp "all": at most this many missed runs are created (the latest ones). */
    catchUpMaxRuns: 100,
    /** Runs due on time that one pass creates for one schedule at most (an every-second schedule after a stall). */
    onTimeMaxRuns: 100,
    /** `nextRuns` in answers. */
    nextRunsShown: 5,
    listMax: 1_000,
    listDefault: 100,
  },
  /** The durable job event log (GET /v1/events). */
  events: {
    retentionDefaultSeconds: 86_400,
    retentionMinSeconds: 60,
    retentionMaxSeconds: 30 * 86_400,
    /** Events one store read returns at most (replay pages). */
    readPageMax: 1_000,
  },
} as const;
