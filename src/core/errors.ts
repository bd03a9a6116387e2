/**
 * One coded catalog of every error core can raise. Protocol adapters map each code to
 * their wire form (SQS error shapes, jobs API `{error:{code,message}}`) in one table each.
 */
export const errorCatalog = {
  QueueNotFound: "The specified queue does not exist.",
  QueueAlreadyExists: "A queue with this name already exists with different attributes.",
  QueueDeletedRecently: "A queue with this name was deleted less than 60 seconds ago.",
  PurgeQueueInProgress: "The queue was purged less than 60 seconds ago.",
  InvalidParameterValue: "A parameter value is invalid.",
  MissingParameter: "A required parameter is missing.",
  InvalidAttributeName: "An attribute name is not recognised.",
  InvalidAttributeValue: "An attribute value is invalid.",
  InvalidMessageContents: "The message contains characters outside the allowed set.",
  MessageTooLong: "The message is larger than the queue allows.",
  ReceiptHandleInvalid: "The receipt handle is not valid.",
  MessageNotInflight: "The message is not in flight.",
  EmptyBatchRequest: "The batch request contains no entries.",
  TooManyEntriesInBatchRequest: "The batch request contains more entries than allowed.",
  BatchEntryIdsNotDistinct: "Two or more batch entries have the same id.",
  InvalidBatchEntryId: "A batch entry id is invalid.",
  BatchRequestTooLong: "The batch request is larger than allowed.",
  UnsupportedOperation: "This operation is not supported.",
  OverLimit: "The action would exceed a limit.",
  /** An account's requests-a-second quota: SQS RequestThrottled, the jobs API 429 with Retry-After. */
  RateLimited: "The account is over its quota of requests a second; retry after Retry-After.",
  ResourceNotFound: "The resource does not exist.",
  InvalidRequest: "The request is malformed.",
  // Jobs API (docs/jobs-api.md).
  ValidationFailed: "The request does not match the API's schema.",
  JobNotFound: "The specified job does not exist.",
  BlobNotUploaded: "The blob's bytes have not been uploaded yet.",
  ScheduleNotFound: "The specified schedule does not exist.",
  JobAlreadyFinished: "The job has already finished.",
  JobNotRetryable: "Only a failed or canceled job can be retried.",
  // Message move tasks (redrives), as SQS answers them: a second active task is InvalidParameterValue,
  // cancelling a finished one UnsupportedOperation; the admin routes (docs/admin-api.md) answer 409s.
  RedriveInProgress: "A redrive of this queue is already running.",
  RedriveAlreadyFinished: "The redrive has already finished.",
  LeaseMismatch: "The lease id is not the job's current lease.",
  LeaseExpired: "The lease has ended; the job will run again elsewhere.",
  IdempotencyKeyReused: "The idempotency key was already used with a different request body.",
  // Authentication (docs/security.md): no or a wrong bearer token / signature, or a missing scope.
  Unauthenticated: "The request is not authenticated.",
  AccessDenied: "The credentials used do not allow this request.",
  /** A path no route of the server answers (or a method the path does not take). */
  RouteNotFound: "No route answers this method and path.",
  // Both protocols: a request arriving once shutdown began is refused, not carried out.
  ServiceUnavailable: "The server is shutting down and did not carry out the request; retry it.",
  // The store's disk is full: writes are refused (nothing written) until space returns; reads go on.
  StorageFull: "The server's disk is full: the request was not carried out. Retry it later.",
  InternalError: "An internal error occurred.",
} as const;

export type ErrorCode = keyof typeof errorCatalog;

/**
 * What an error is about, in core's terms, for a protocol that names things its own way: the SQS
 * layer words these with its parameter names and ARNs; other protocols show the message as it is.
 */
export type ErrorSubject =
  | { kind: "moveTaskSource" | "moveTaskDestination" | "moveTaskHandle" }
  /** The destination is the source itself, or a queue of the other type (FIFO or standard). */
  | { kind: "moveTaskDestinationInvalid"; reason: "isSource" | "otherType" }
  | { kind: "moveTaskRate"; value: number }
  | { kind: "moveTaskListLimit"; value: number }
  /** A number out of its range: a receive's, a send's, a visibility change's, a list's size. */
  | { kind: RangeSubject; value: number }
  /** A queue setting out of its range (`field` a QueueConfig field, or redrivePolicy.maxReceiveCount). */
  | { kind: "queueConfigRange"; field: QueueRangeField; value: number; min: number; max: number }
  /** A queue name that is not 1–80 of [A-Za-z0-9_-] (then .fifo for a FIFO queue, only then). */
  | { kind: "queueName"; problem: "fifoSuffixMissing" | "fifoSuffixOnStandard" | "characters" }
  | { kind: "tagCount"; queueName: string }
  /** A receipt handle whose lease ended (FIFO delete), or whose message can't change visibility. */
  | { kind: "receiptHandleExpired" | "receiptHandleNotAvailable"; handle: string }
  /** A queue's type (FIFO or standard) asked to change; a purge within a minute of the last one. */
  | { kind: "queueTypeChange" }
  | { kind: "purgeCooldown"; queueName: string }
  /** A message (body and attributes) larger than its queue's maximum. */
  | { kind: "messageTooLong"; maxBytes: number }
  /** A visibility change that would keep the message in flight past the limit from its receive. */
  | { kind: "visibilityBeyondLimit"; value: number }
  /** A FIFO id (message group, deduplication, receive attempt): empty, too long, or characters outside the set. */
  | { kind: "fifoId"; field: "groupId" | "deduplicationId" | "receiveAttemptId"; value: string }
  /** What a send to a queue of this type must not carry, or must carry. */
  | { kind: "deduplicationIdOnStandardQueue" | "fifoGroupIdMissing" | "fifoDeduplicationIdMissing" }
  | { kind: "fifoMessageDelay"; value: number }
  | { kind: "messageBodyEmpty" | "invalidCharacters" }
  | { kind: "messageAttributeCount"; value: number }
  /** One message attribute's fault; `dataType` as sent ("" when absent). */
  | { kind: "messageAttribute"; problem: MessageAttributeProblem; name: string; dataType: string }
  | { kind: "deadLetterQueue"; problem: "missing" | "otherType" | "notAllowed"; deadLetterQueueName: string; maxReceiveCount: number; fifoSource: boolean };

/** The numbers core checks against a range, each with SQS's words in the SQS layer. */
export type RangeSubject =
  | "receiveMaxMessages"
  | "receiveWaitSeconds"
  | "visibilitySeconds"
  | "messageDelaySeconds"
  | "messagePriority"
  | "listQueuesLimit"
  | "deadLetterSourcesLimit";

export type QueueRangeField =
  | "visibilityTimeoutSeconds"
  | "delaySeconds"
  | "messageRetentionPeriodSeconds"
  | "maximumMessageSizeBytes"
  | "receiveMessageWaitTimeSeconds"
  | "kmsDataKeyReusePeriodSeconds"
  | "defaultPriority"
  | "redrivePolicy.maxReceiveCount";

export type MessageAttributeProblem = "name" | "typeMissing" | "type" | "binaryValueMissing" | "valueMissing" | "characters" | "notNumber";

export class SluiceError extends Error {
  override readonly name = "SluiceError";
  constructor(
    readonly code: ErrorCode,
    message: string = errorCatalog[code],
    readonly subject?: ErrorSubject,
  ) {
    super(message);
  }
}

export function fail(code: ErrorCode, message?: string, subject?: ErrorSubject): never {
  throw new SluiceError(code, message, subject);
}

/**
 * A write naming a queue deleted since the caller read it (core holds queue records from its
 * cache): QueueNotFound, which callers know how to recover from, not a store's raw error.
 */
export function queueGone(queueName: string): never {
  fail("QueueNotFound", `Queue ${queueName} does not exist (it was deleted).`);
}

/** An integer from `min` to `max`, or InvalidParameterValue naming it as core does (`name`), with its subject. */
export function checkInteger(name: string, value: number, min: number, max: number, subject?: RangeSubject): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    fail("InvalidParameterValue", `${name} must be an integer from ${min} to ${max}, got ${value}.`, subject === undefined ? undefined : { kind: subject, value });
  }
}

/** Programmer errors crash loudly (TigerBeetle style): they are never a user's fault. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`invariant violated: ${message}`);
}
