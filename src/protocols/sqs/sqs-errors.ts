/**
 * The one table mapping core error codes to SQS wire errors, and the protocol-level errors that
 * exist only on the wire (unknown action, junk body). Shape names and query codes follow the
 * smithy model's `awsQueryError` traits; codes the model doesn't define use one name for both.
 */
import { type ErrorCode, SluiceError } from "../../core/index.js";
import type { SqsIdentity } from "./queue-url.js";
import { sqsMessageOf } from "./sqs-wording.js";

export type SqsFault = "Sender" | "Receiver";

export interface SqsErrorSpec {
  /** The smithy shape name: JSON `__type` is `com.amazonaws.sqs#<shape>`. */
  shape: string;
  /** The query `<Code>` and the first half of `x-amzn-query-error`. */
  queryCode: string;
  httpStatus: number;
  fault: SqsFault;
}

function spec(shape: string, queryCode: string = shape, httpStatus = 400, fault: SqsFault = "Sender"): SqsErrorSpec {
  return { shape, queryCode, httpStatus, fault };
}

/**
 * The two common errors the model doesn't define: SQS's JSON answers name their `__type`
 * InvalidParameterValueException and MissingRequiredParameterException (what botocore reports as
 * QueryErrorCode), with the query codes InvalidParameterValue / MissingParameter in the header.
 */
const invalidParameterValue = spec("InvalidParameterValueException", "InvalidParameterValue");
const missingParameter = spec("MissingRequiredParameterException", "MissingParameter");

/** Every core code → its SQS error. `satisfies` makes a new core code a compile error here. */
export const sqsErrorForCode = {
  QueueNotFound: spec("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"),
  QueueAlreadyExists: spec("QueueNameExists", "QueueAlreadyExists"),
  QueueDeletedRecently: spec("QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently"),
  PurgeQueueInProgress: spec("PurgeQueueInProgress", "AWS.SimpleQueueService.PurgeQueueInProgress", 403),
  InvalidParameterValue: invalidParameterValue,
  MissingParameter: missingParameter,
  InvalidAttributeName: spec("InvalidAttributeName"),
  InvalidAttributeValue: spec("InvalidAttributeValue"),
  InvalidMessageContents: spec("InvalidMessageContents"),
  // SQS reports an oversized message as a bad parameter value, not as a code of its own.
  MessageTooLong: invalidParameterValue,
  ReceiptHandleInvalid: spec("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 404),
  MessageNotInflight: spec("MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight"),
  EmptyBatchRequest: spec("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest"),
  TooManyEntriesInBatchRequest: spec("TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"),
  BatchEntryIdsNotDistinct: spec("BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"),
  InvalidBatchEntryId: spec("InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId"),
  BatchRequestTooLong: spec("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong"),
  UnsupportedOperation: spec("UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation"),
  OverLimit: spec("OverLimit", "OverLimit", 403),
  RateLimited: spec("RequestThrottled", "RequestThrottled", 403),
  ResourceNotFound: spec("ResourceNotFoundException", "ResourceNotFoundException", 404),
  InvalidRequest: spec("InvalidRequest"),
  // Jobs API codes: raised only by the jobs routes, never by an SQS action; mapped for completeness.
  ValidationFailed: invalidParameterValue,
  JobNotFound: spec("ResourceNotFoundException", "ResourceNotFoundException", 404),
  ScheduleNotFound: spec("ResourceNotFoundException", "ResourceNotFoundException", 404),
  JobAlreadyFinished: invalidParameterValue,
  BlobNotUploaded: invalidParameterValue,
  JobNotRetryable: invalidParameterValue,
  // A second active move task: SQS's recorded answer is InvalidParameterValue.
  RedriveInProgress: invalidParameterValue,
  RedriveAlreadyFinished: spec("UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation"),
  LeaseMismatch: spec("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 404),
  LeaseExpired: spec("MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight"),
  IdempotencyKeyReused: invalidParameterValue,
  // Raised outside SQS actions (bearer tokens, unknown routes); mapped for completeness.
  Unauthenticated: spec("MissingAuthenticationToken", "MissingAuthenticationToken", 403),
  AccessDenied: spec("AccessDenied", "AccessDenied", 403),
  RouteNotFound: spec("InvalidAction"),
  // AWS's common error for a temporary failure; SDKs retry it for its 503, as they retry SQS's own.
  ServiceUnavailable: spec("ServiceUnavailable", "ServiceUnavailable", 503, "Receiver"),
  // A full disk is temporary too: the same 503, which SDKs retry, with the reason in the message.
  StorageFull: spec("ServiceUnavailable", "ServiceUnavailable", 503, "Receiver"),
  InternalError: spec("InternalError", "InternalError", 500, "Receiver"),
} as const satisfies Record<ErrorCode, SqsErrorSpec>;

/** Errors that exist only at the protocol level (never raised by core). */
export const protocolErrors = {
  InvalidAction: spec("InvalidAction"),
  MissingAction: spec("MissingAction"),
  MalformedQueryString: spec("MalformedQueryString"),
  // AWS's common error for a query parameter the action doesn't have (docs/sqs-compatibility.md).
  InvalidQueryParameter: spec("InvalidQueryParameter"),
  SerializationException: spec("SerializationException"),
  RequestEntityTooLarge: spec("RequestEntityTooLarge", "RequestEntityTooLarge", 413),
  // Authentication (AWS's common errors): which one for which failure is in docs/security.md.
  MissingAuthenticationToken: spec("MissingAuthenticationToken", "MissingAuthenticationToken", 403),
  IncompleteSignature: spec("IncompleteSignature", "IncompleteSignature", 400),
  InvalidClientTokenId: spec("InvalidClientTokenId", "InvalidClientTokenId", 403),
  SignatureDoesNotMatch: spec("SignatureDoesNotMatch", "SignatureDoesNotMatch", 403),
  RequestExpired: spec("RequestExpired", "RequestExpired", 400),
  AccessDenied: spec("AccessDenied", "AccessDenied", 403),
} as const satisfies Record<string, SqsErrorSpec>;

export type ProtocolErrorName = keyof typeof protocolErrors;

export class SqsProtocolError extends Error {
  override readonly name = "SqsProtocolError";
  constructor(
    readonly errorName: ProtocolErrorName,
    message: string,
  ) {
    super(message);
  }
}

export function protocolFail(errorName: ProtocolErrorName, message: string): never {
  throw new SqsProtocolError(errorName, message);
}

export interface SqsWireError extends SqsErrorSpec {
  message: string;
}

/**
 * Where SQS's query (XML) answers word an error otherwise than its JSON ones: a missing queue is
 * "… does not exist for this wsdl version." in query (LocalStack's AWS-validated
 * test_non_existent_queue and test_get_on_deleted_queue_fails record both wordings).
 */
const queryWordings: ReadonlyArray<{ queryCode: string; json: string; query: string }> = [
  { queryCode: "AWS.SimpleQueueService.NonExistentQueue", json: "The specified queue does not exist.", query: "The specified queue does not exist for this wsdl version." },
];

/** The error as a query-protocol answer words it. */
export function inQueryWording(error: SqsWireError): SqsWireError {
  const wording = queryWordings.find((w) => w.queryCode === error.queryCode && w.json === error.message);
  return wording === undefined ? error : { ...error, message: wording.query };
}

/**
 * Any thrown value → the error to send. Unknown errors are programmer errors: the client gets
 * a generic InternalError, and `onUnexpected` (the server's logger) gets the real one. With the
 * identity of the account the request works on, core's errors are worded as SQS words them
 * (sqs-wording.ts).
 */
export function toSqsWireError(err: unknown, onUnexpected?: (err: unknown) => void, identity?: SqsIdentity): SqsWireError {
  if (err instanceof SluiceError) return { ...sqsErrorForCode[err.code], message: identity === undefined ? err.message : sqsMessageOf(err, identity) };
  if (err instanceof SqsProtocolError) return { ...protocolErrors[err.errorName], message: err.message };
  onUnexpected?.(err);
  return { ...sqsErrorForCode.InternalError, message: "We encountered an internal error. Please try again." };
}
