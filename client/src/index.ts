/**
 * @sluice/client — submit jobs to a Sluice server, wait for their results, and run workers.
 * Depends on nothing but fetch.
 */
export { Sluice, type SluiceOptions } from "./sluice.js";
export { QueueClient, type RunOptions, type SubmitOptions } from "./queue.js";
export { JobsClient, isTerminal, type JobPage, type ListOptions, type WaitOptions } from "./jobs.js";
export { JobHandle } from "./job-handle.js";
export type { AttachmentData, AttachmentSource } from "./attachment-source.js";
export { BlobsClient, type UploadOptions } from "./blobs.js";
export type { AttachOptions } from "./output-attachments.js";
export { SchedulesClient, type SchedulePage } from "./schedules.js";
export type { EventStreamOptions } from "./event-stream.js";
export type { StreamOptions } from "./job-stream.js";
export type { OpenTelemetryApi } from "./tracing.js";
export {
  Worker,
  type BatchContext,
  type BatchHandler,
  type BatchOptions,
  type BatchResult,
  type CloseOptions,
  type JobContext,
  type JobHandler,
  type WorkerOptions,
  type WorkerPhase,
  type WorkerStats,
} from "./worker.js";
export {
  BatchItemError,
  JobCanceledError,
  JobFailedError,
  JobWaitTimeoutError,
  LeaseLostError,
  NonRetryableError,
  RetryableError,
  SluiceApiError,
  SluiceNetworkError,
  WorkerClosingError,
} from "./errors.js";
export { type Timers, systemTimers } from "./timers.js";
export type { BackoffPolicy } from "./backoff.js";
export type { FetchLike } from "./http.js";
export * from "./wire.js";
export { defineWorker, type WorkerDefinition, type WorkerSettings } from "./worker-definition.js";
