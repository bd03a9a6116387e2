/**
 * Dead-letter queue actions: ListDeadLetterSourceQueues, and the message move tasks
 * (StartMessageMoveTask, CancelMessageMoveTask, ListMessageMoveTasks). Core names queues by name;
 * this file turns SourceArn/DestinationArn into names and names back into ARNs.
 */
import { fail, type MoveTaskRecord, listDeadLetterSourceQueues as listSources } from "../../../core/index.js";
import { type ActionContext, defineAction, queueForUrl, urlOfQueue } from "../action.js";
import { queueArn, queueNameFromArn } from "../queue-url.js";
import { sqsFailureReason } from "../sqs-wording.js";
import { optionalInteger, optionalString, requiredString } from "../wire-input.js";
import { xmlElement } from "../xml.js";

function queueNameOf(ctx: ActionContext, parameter: string, arn: string): string {
  const name = queueNameFromArn(ctx.identity, arn);
  if (name === undefined) fail("InvalidParameterValue", `Value ${arn} for parameter ${parameter} is invalid. Reason: must be the ARN of a queue of this account and region.`);
  return name;
}

/** NextToken is the last source queue's name, opaque to clients. */
function encodeNextToken(lastName: string): string {
  return Buffer.from(`d:${lastName}`, "utf8").toString("base64url");
}

function decodeNextToken(token: string): string {
  const text = Buffer.from(token, "base64url").toString("utf8");
  if (!text.startsWith("d:")) fail("InvalidParameterValue", "Invalid NextToken value.");
  return text.slice(2);
}

interface ListDeadLetterSourceQueuesResult {
  // The model spells this member in lower camel case (unlike ListQueues' QueueUrls).
  queueUrls: string[];
  NextToken?: string;
}

export const listDeadLetterSourceQueues = defineAction({
  decode: (input) => ({
    queueUrl: requiredString(input, "QueueUrl"),
    maxResults: optionalInteger(input, "MaxResults"),
    nextToken: optionalString(input, "NextToken"),
  }),
  async run(req, ctx): Promise<ListDeadLetterSourceQueuesResult> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    const afterName = req.nextToken ? decodeNextToken(req.nextToken) : undefined;
    const { queues, hasMore } = await listSources(ctx.queues, queue.name, { maxResults: req.maxResults, afterName });
    const result: ListDeadLetterSourceQueuesResult = { queueUrls: queues.map((q) => urlOfQueue(ctx, q.name)) };
    // As ListQueues: SQS pages only when the caller asked for pages.
    if (req.maxResults !== undefined && hasMore) result.NextToken = encodeNextToken(queues[queues.length - 1]!.name);
    return result;
  },
  toXml: (res) => res.queueUrls.map((url) => xmlElement("QueueUrl", url)).join("") + xmlElement("NextToken", res.NextToken),
});

interface StartMessageMoveTaskResult {
  TaskHandle: string;
}

export const startMessageMoveTask = defineAction({
  decode: (input) => ({
    sourceArn: requiredString(input, "SourceArn"),
    destinationArn: optionalString(input, "DestinationArn"),
    maxMessagesPerSecond: optionalInteger(input, "MaxNumberOfMessagesPerSecond"),
  }),
  async run(req, ctx): Promise<StartMessageMoveTaskResult> {
    const task = await ctx.queues.moveTasks.start({
      sourceQueueName: queueNameOf(ctx, "SourceArn", req.sourceArn),
      destinationQueueName: req.destinationArn === undefined ? undefined : queueNameOf(ctx, "DestinationArn", req.destinationArn),
      maxMessagesPerSecond: req.maxMessagesPerSecond,
    });
    return { TaskHandle: task.taskHandle };
  },
  toXml: (res) => xmlElement("TaskHandle", res.TaskHandle),
});

interface CancelMessageMoveTaskResult {
  ApproximateNumberOfMessagesMoved: number;
}

export const cancelMessageMoveTask = defineAction({
  decode: (input) => requiredString(input, "TaskHandle"),
  async run(taskHandle, ctx): Promise<CancelMessageMoveTaskResult> {
    const task = await ctx.queues.moveTasks.cancel(taskHandle);
    return { ApproximateNumberOfMessagesMoved: task.movedCount };
  },
  toXml: (res) => xmlElement("ApproximateNumberOfMessagesMoved", res.ApproximateNumberOfMessagesMoved),
});

interface MoveTaskEntry {
  TaskHandle?: string;
  Status: string;
  SourceArn: string;
  DestinationArn?: string;
  MaxNumberOfMessagesPerSecond?: number;
  ApproximateNumberOfMessagesMoved: number;
  ApproximateNumberOfMessagesToMove?: number;
  FailureReason?: string;
  StartedTimestamp: number;
}

function taskEntry(ctx: ActionContext, t: MoveTaskRecord): MoveTaskEntry {
  return {
    // SQS shows the handle only while the task can still be cancelled.
    TaskHandle: t.status === "RUNNING" ? t.taskHandle : undefined,
    Status: t.status,
    SourceArn: queueArn(ctx.identity, t.sourceQueueName),
    DestinationArn: t.destinationQueueName === undefined ? undefined : queueArn(ctx.identity, t.destinationQueueName),
    MaxNumberOfMessagesPerSecond: t.maxMessagesPerSecond,
    ApproximateNumberOfMessagesMoved: t.movedCount,
    ApproximateNumberOfMessagesToMove: t.toMoveCount,
    FailureReason: sqsFailureReason(t),
    StartedTimestamp: t.startedAtMs,
  };
}

function taskEntryXml(e: MoveTaskEntry): string {
  return (
    "<ListMessageMoveTasksResultEntry>" +
    xmlElement("TaskHandle", e.TaskHandle) +
    xmlElement("Status", e.Status) +
    xmlElement("SourceArn", e.SourceArn) +
    xmlElement("DestinationArn", e.DestinationArn) +
    xmlElement("MaxNumberOfMessagesPerSecond", e.MaxNumberOfMessagesPerSecond) +
    xmlElement("ApproximateNumberOfMessagesMoved", e.ApproximateNumberOfMessagesMoved) +
    xmlElement("ApproximateNumberOfMessagesToMove", e.ApproximateNumberOfMessagesToMove) +
    xmlElement("FailureReason", e.FailureReason) +
    xmlElement("StartedTimestamp", e.StartedTimestamp) +
    "</ListMessageMoveTasksResultEntry>"
  );
}

interface ListMessageMoveTasksResult {
  Results: MoveTaskEntry[];
}

export const listMessageMoveTasks = defineAction({
  decode: (input) => ({ sourceArn: requiredString(input, "SourceArn"), maxResults: optionalInteger(input, "MaxResults") }),
  async run(req, ctx): Promise<ListMessageMoveTasksResult> {
    const tasks = await ctx.queues.moveTasks.list(queueNameOf(ctx, "SourceArn", req.sourceArn), req.maxResults);
    return { Results: tasks.map((t) => taskEntry(ctx, t)) };
  },
  toXml: (res) => res.Results.map(taskEntryXml).join(""),
});
