/**
 * Core's public surface: what protocols, the server and the CLI may use. They import core through
 * this file only (.dependency-cruiser.cjs), so core's files can move without touching them.
 * Stores implement the contract in store.ts and may reach core's internals (transitions, records).
 */

// Time, ids, limits and errors
export { type Clock, type TimerHandle, ManualClock, systemClock } from "./clock.js";
export type { IdSource } from "./ids.js";
export { limits } from "./limits.js";
export { type ErrorCode, type ErrorSubject, SluiceError, assert, errorCatalog, fail } from "./errors.js";

// Queues and messages
export { type QueueConfig, type QueueRecord, type RedriveAllowPolicy, type RedrivePolicy, defaultQueueConfig, isFifoName, validateQueueConfig, validateQueueName } from "./queue.js";
export type { MessageAttributeValue, MessageAttributes, NewMessage, StoredMessage } from "./message.js";
export { attributesMd5, md5Hex } from "./digests.js";
export { checkFifoBatch, formatSequenceNumber } from "./fifo.js";
export { messageSizeBytes } from "./message-validation.js";
export {
  type AccountQueues,
  type EntryOutcome,
  type ExpireSlices,
  type MessageState,
  type PeekedMessage,
  QueueService,
  type QueueServiceDeps,
  type ReceiveInput,
  type ReceivedMessage,
  type SendInput,
  type SendResult,
  type VisibilityChange,
  differingConfigKeys,
  expireSliceMessages,
} from "./queue-service.js";
export type { MoveTaskRecord, MoveTaskStatus } from "./move-task-record.js";
export { listDeadLetterSourceQueues } from "./redrive.js";
export { loadReceiptSecret } from "./receipt.js";
export type { QueueThroughput } from "./queue-activity.js";

// The store contract (implemented under src/stores)
export type { QueueStats, Store } from "./store.js";
export { type AccountQuotas, type QuotaName, type QuotaSource, quotaNames } from "./quotas.js";
export type { QueueObserver, QueueRef } from "./observer.js";
export { InProcessNotifier, type Notifier, type StoreNotice } from "./notifier.js";

// Jobs
export { type JobError, type JobEvent, type JobRecord, type JobStatus, type LeasedJob, isTerminal, jobEventTypes, jobStatuses, webhookEventTypes } from "./job.js";
export {
  type AccountJobs,
  JobService,
  type JobServiceDeps,
  type JobPage,
  type LeaseAckInput,
  type LeaseInput,
  type LeaseWithAcksResult,
  type SubmitResult,
  type WaitSignal,
} from "./jobs/job-service.js";
export { type JobQueueSettings, type JobQueueSettingsPatch, applySettingsPatch, defaultJobQueueSettings } from "./job-settings.js";
export type { SubmitInput } from "./jobs/job-validation.js";
export { parseIdempotencyKey } from "./jobs/idempotency.js";
export type { JobEventFilter } from "./jobs/job-events.js";
export { type JobMaintenance, startJobMaintenance } from "./jobs/job-maintenance.js";
export type { JobQueueInfo } from "./jobs/job-queue-info.js";
export type { WebhookDelivery } from "./job-store.js";
export { webhookRetry } from "./jobs/webhook-schedule.js";

// Schedules, dependencies and lease limits (docs/jobs-api.md)
export type { CronCompiler, RunTimes } from "./schedules/run-times.js";
export { type CatchUp, type ScheduleInput, type ScheduleJobOptions, type ScheduleRecord, catchUpModes, defaultCatchUp } from "./schedules/schedule.js";
export { type ScheduleDefinition, validateScheduleInput } from "./schedules/schedule-validation.js";
export { type JobTrace, type OnParentFailure, onParentFailureModes } from "./job.js";
export { type BatchDependency, batchSubmitOrder } from "./jobs/batch-graph.js";

// Autoscaling advice (docs/operations.md)
export { type WorkersAdvice, type WorkloadSample, adviseWorkers } from "./autoscaling/workers-formula.js";
export { type WorkloadRates, WorkloadTracker, workloadWindowSeconds } from "./autoscaling/workload-tracker.js";
export type { JobEventLog, LoggedJobEvent } from "./job-event-log.js";
export { JobEventFeed, type EventFeedFilter } from "./jobs/event-feed.js";
export { type AccountSchedules, ScheduleService, type ScheduleView, type SchedulePage } from "./schedules/schedule-service.js";
export { scheduleRunJobs } from "./schedules/schedule-run-jobs.js";
export { type Scheduler, startScheduler } from "./schedules/scheduler.js";
export { type BatchJobRow, type BatchLineError, type BatchRecord, type BatchStatus, type FileRecord, batchStatuses, isBatchDone } from "./batches/batch.js";
export type { BatchStore } from "./batches/batch-store.js";
export { BatchService, type BatchCreateInput, type BatchJobs } from "./batches/batch-service.js";
export { batchJobsOf } from "./batches/batch-jobs.js";
export { type BatchRunner, startBatchRunner } from "./batches/batch-runner.js";
export { FileService } from "./batches/file-service.js";
export { outputLimits } from "./jobs/output-chunks.js";
export { type TraceParent, parseTraceparent, traceContextOf } from "./trace-context.js";

// Attachments (docs/jobs-api.md, "Attachments")
export { type AttachmentInfo, type BlobRecord, isBlobId, parseAttachments } from "./blobs/blob.js";
export type { BlobStore } from "./blobs/blob-store.js";
export type { BlobFacts, BlobStorage, PresignParams, ServedBlobBytes } from "./blobs/blob-storage.js";
export { BlobService, type BlobServiceDeps, type BlobView } from "./blobs/blob-service.js";
export { type BlobSweeper, startBlobSweeper } from "./blobs/blob-sweeper.js";
