/**
 * Core's words turned into SQS's, in one place: core names queues by name and its inputs its own
 * way (an error's `subject`, a move task's failure); SQS answers with ARNs, its parameter names and
 * the texts it is recorded giving.
 */
import type { ErrorSubject, MoveTaskRecord, QueueConfig, RedrivePolicy, SluiceError } from "../../core/index.js";
import { limits } from "../../core/index.js";
import { type SqsIdentity, queueArn } from "./queue-url.js";

/** A RedrivePolicy as SQS writes it: the dead-letter queue as an ARN. */
export function redrivePolicyJson(identity: SqsIdentity, policy: RedrivePolicy): string {
  return JSON.stringify({ deadLetterTargetArn: queueArn(identity, policy.deadLetterQueueName), maxReceiveCount: policy.maxReceiveCount });
}

const resourceMissing = (parameter: string): string => `The resource that you specified for the ${parameter} parameter doesn't exist.`;

/** The attribute that sets each config field: SQS names attributes in errors, not fields. */
export const attributeOfConfigKey: Record<keyof QueueConfig, string> = {
  visibilityTimeoutSeconds: "VisibilityTimeout",
  delaySeconds: "DelaySeconds",
  messageRetentionPeriodSeconds: "MessageRetentionPeriod",
  maximumMessageSizeBytes: "MaximumMessageSize",
  receiveMessageWaitTimeSeconds: "ReceiveMessageWaitTimeSeconds",
  fifoQueue: "FifoQueue",
  contentBasedDeduplication: "ContentBasedDeduplication",
  deduplicationScope: "DeduplicationScope",
  fifoThroughputLimit: "FifoThroughputLimit",
  redrivePolicy: "RedrivePolicy",
  redriveAllowPolicy: "RedriveAllowPolicy",
  kmsMasterKeyId: "KmsMasterKeyId",
  kmsDataKeyReusePeriodSeconds: "KmsDataKeyReusePeriodSeconds",
  sqsManagedSseEnabled: "SqsManagedSseEnabled",
  policy: "Policy",
  defaultPriority: "Sluice.DefaultPriority",
  paused: "Sluice.Paused",
};

const fifoIdParameters = { groupId: "MessageGroupId", deduplicationId: "MessageDeduplicationId", receiveAttemptId: "ReceiveRequestAttemptId" } as const;

/** SQS's words for a number out of its range. */
const rangeMessage = (value: number, parameter: string, min: number, max: number): string => `Value ${value} for parameter ${parameter} is invalid. Reason: Must be between ${min} and ${max}.`;

/** A message attribute's fault, in SQS's recorded texts. */
function messageAttributeMessage(subject: Extract<ErrorSubject, { kind: "messageAttribute" }>): string {
  const name = subject.name;
  switch (subject.problem) {
    case "name":
      return `Message attribute name '${name}' is invalid.`;
    case "typeMissing":
      return `The message attribute '${name}' must contain non-empty message attribute type.`;
    case "type":
      return `The type of message attribute '${name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String.`;
    case "binaryValueMissing":
      return `The message attribute '${name}' with type 'Binary' must use field 'Binary'.`;
    case "valueMissing":
      return `Message (user) attribute '${name}' must contain a non-empty value of type '${subject.dataType.split(".")[0]}'.`;
    case "characters":
      return `The message attribute '${name}' contains invalid characters.`;
    case "notNumber":
      return `Can't cast the value of message (user) attribute '${name}' to a number.`;
  }
}

/** The message of a core error as SQS words it; the core message when SQS has no words of its own for it. */
export function sqsMessageOf(err: SluiceError, identity: SqsIdentity): string {
  // SQS's words for a second active task, whatever the code becomes on its wire (sqs-errors.ts).
  if (err.code === "RedriveInProgress") return "There is already a task running. Only one active task is allowed for a source queue arn at a given time.";
  const subject = err.subject;
  if (subject === undefined) return err.message;
  switch (subject.kind) {
    case "moveTaskSource":
      return err.code === "ResourceNotFound" ? resourceMissing("SourceArn") : err.message;
    case "moveTaskDestination":
      return err.code === "ResourceNotFound" ? resourceMissing("DestinationArn") : err.message;
    case "moveTaskDestinationInvalid":
      return `Value for parameter DestinationArn is invalid. Reason: ${
        subject.reason === "isSource" ? "the destination can't be the source queue." : "source and destination queues must be of the same type (both FIFO or both standard)."
      }`;
    case "moveTaskHandle":
      return "Value for parameter TaskHandle is invalid.";
    case "moveTaskRate":
      return rangeMessage(subject.value, "MaxNumberOfMessagesPerSecond", limits.moveTaskRateMin, limits.moveTaskRateMax);
    case "moveTaskListLimit":
      return rangeMessage(subject.value, "MaxResults", 1, limits.listMoveTasksMaxResults);
    // SQS's own words for a receive's ranges (recorded against it in LocalStack's AWS-validated suite).
    case "receiveMaxMessages":
      return `Value ${subject.value} for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and ${limits.receiveMaxMessages}, if provided.`;
    case "receiveWaitSeconds":
      return `Value ${subject.value} for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= ${limits.waitTimeMaxSeconds}, if provided.`;
    case "visibilitySeconds":
      return rangeMessage(subject.value, "VisibilityTimeout", 0, limits.visibilityTimeoutMaxSeconds);
    case "messageDelaySeconds":
      return rangeMessage(subject.value, "DelaySeconds", 0, limits.delayMaxSeconds);
    case "messagePriority":
      return rangeMessage(subject.value, "Sluice.Priority", limits.priorityMin, limits.priorityMax);
    case "listQueuesLimit":
      return rangeMessage(subject.value, "MaxResults", 1, limits.listQueuesMaxResults);
    case "deadLetterSourcesLimit":
      return rangeMessage(subject.value, "MaxResults", 1, limits.listDeadLetterSourceQueuesMaxResults);
    case "visibilityBeyondLimit":
      return `Value ${subject.value} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [${limits.visibilityTimeoutMaxSeconds} seconds]`;
    case "receiptHandleExpired":
      return `Value ${subject.handle} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.`;
    case "receiptHandleNotAvailable":
      return `Value ${subject.handle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.`;
    case "queueConfigRange": {
      const attribute = subject.field === "redrivePolicy.maxReceiveCount" ? "RedrivePolicy.maxReceiveCount" : attributeOfConfigKey[subject.field];
      return `Invalid value for the parameter ${attribute}. Reason: must be an integer from ${subject.min} to ${subject.max}.`;
    }
    case "queueName":
      return subject.problem === "fifoSuffixMissing"
        ? `The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to ${limits.queueNameMaxLength} in length.`
        : `Can only include alphanumeric characters, hyphens, or underscores. 1 to ${limits.queueNameMaxLength} in length`;
    case "tagCount":
      return `Too many tags added for queue ${subject.queueName}.`;
    case "queueTypeChange":
      return "Unknown Attribute FifoQueue.";
    case "purgeCooldown":
      return `Only one PurgeQueue operation on ${subject.queueName} is allowed every 60 seconds.`;
    case "messageTooLong":
      return `One or more parameters are invalid. Reason: Message must be shorter than ${subject.maxBytes} bytes.`;
    case "fifoId": {
      const parameter = fifoIdParameters[subject.field];
      return `Value ${subject.value} for parameter ${parameter} is invalid. Reason: ${parameter} can only include alphanumeric and punctuation characters. 1 to ${limits.fifoIdMaxLength} in length.`;
    }
    case "deduplicationIdOnStandardQueue":
      return "The request include parameter MessageDeduplicationId that is not valid for this queue type";
    case "fifoGroupIdMissing":
      return "The request must contain the parameter MessageGroupId.";
    case "fifoDeduplicationIdMissing":
      return "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly";
    case "fifoMessageDelay":
      return `Value ${subject.value} for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.`;
    case "messageBodyEmpty":
      return "The request must contain the parameter MessageBody.";
    case "invalidCharacters":
      return "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF";
    case "messageAttributeCount":
      return `Number of message attributes [${subject.value}] exceeds the allowed maximum [${limits.messageAttributesMax}].`;
    case "messageAttribute":
      return messageAttributeMessage(subject);
    case "deadLetterQueue": {
      const policy = redrivePolicyJson(identity, subject);
      const reason =
        subject.problem === "missing"
          ? "Dead letter target does not exist."
          : subject.problem === "otherType"
            ? subject.fifoSource
              ? "Dead-letter queue of a FIFO queue must be a FIFO queue."
              : "Dead-letter queue of a standard queue must be a standard queue."
            : `The RedriveAllowPolicy of ${subject.deadLetterQueueName} does not allow this queue to use it as a dead-letter queue.`;
      return `Value ${policy} for parameter RedrivePolicy is invalid. Reason: ${reason}`;
    }
  }
}

/** Move task failures, from core's reasons (stores may hold SQS's own from before: they pass as they are). */
const failureReasons: Readonly<Record<string, string>> = {
  SourceQueueGone: "AWS.SimpleQueueService.NonExistentQueue",
  DestinationQueueGone: "AWS.SimpleQueueService.NonExistentQueue",
  MessageSourceUnknown: "CouldNotDetermineMessageSource",
};

export function sqsFailureReason(task: MoveTaskRecord): string | undefined {
  const reason = task.failureReason;
  return reason === undefined ? undefined : (failureReasons[reason] ?? reason);
}
