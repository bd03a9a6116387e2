/**
 * Core words its errors and move-task failures protocol-neutrally (queues by name, its own input
 * names); the SQS layer answers in SQS's words: ARNs, SQS parameter names, SQS's recorded texts.
 * Each case goes through the real SQS handler on a real SQLite store.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QueueRecord, SendInput } from "../../src/core/index.js";
import { type SqsHarness, accountId, openHarness, region, unescapeXml, xmlText } from "./sqs-harness.js";

let h: SqsHarness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

const arn = (name: string): string => `arn:aws:sqs:${region}:${accountId}:${name}`;

async function errorOf(action: string, body: unknown): Promise<{ type: string; message: string }> {
  const res = await h.json(action, body);
  expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
  const json = res.json() as { __type: string; message: string };
  return { type: json.__type.replace("com.amazonaws.sqs#", ""), message: json.message };
}

describe("core's errors in SQS's words", () => {
  it("a RedrivePolicy refused by core names the policy with its ARN, and SQS's reason", async () => {
    await h.createQueue("fifo-dlq.fifo", { FifoQueue: "true" });
    await h.createQueue("closed", { RedriveAllowPolicy: JSON.stringify({ redrivePermission: "denyAll" }) });
    const policy = (dlq: string): string => JSON.stringify({ deadLetterTargetArn: arn(dlq), maxReceiveCount: 3 });
    const value = (dlq: string): string => `Value {"deadLetterTargetArn":"${arn(dlq)}","maxReceiveCount":3} for parameter RedrivePolicy is invalid. Reason:`;
    expect(await errorOf("CreateQueue", { QueueName: "a", Attributes: { RedrivePolicy: policy("ghost") } })).toEqual({
      type: "InvalidParameterValueException",
      message: `${value("ghost")} Dead letter target does not exist.`,
    });
    expect((await errorOf("CreateQueue", { QueueName: "b", Attributes: { RedrivePolicy: policy("fifo-dlq.fifo") } })).message).toBe(
      `${value("fifo-dlq.fifo")} Dead-letter queue of a standard queue must be a standard queue.`,
    );
    expect((await errorOf("CreateQueue", { QueueName: "c", Attributes: { RedrivePolicy: policy("closed") } })).message).toBe(
      `${value("closed")} The RedriveAllowPolicy of closed does not allow this queue to use it as a dead-letter queue.`,
    );
  });

  it("move task inputs are named as StartMessageMoveTask, CancelMessageMoveTask and ListMessageMoveTasks name them", async () => {
    await h.createQueue("dlq");
    await h.createQueue("src", { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn("dlq"), maxReceiveCount: 3 }) });
    await h.createQueue("f.fifo", { FifoQueue: "true" });
    expect(await errorOf("StartMessageMoveTask", { SourceArn: arn("dlq"), DestinationArn: arn("ghost") })).toEqual({
      type: "ResourceNotFoundException",
      message: "The resource that you specified for the DestinationArn parameter doesn't exist.",
    });
    expect((await errorOf("StartMessageMoveTask", { SourceArn: arn("dlq"), DestinationArn: arn("dlq") })).message).toBe(
      "Value for parameter DestinationArn is invalid. Reason: the destination can't be the source queue.",
    );
    expect((await errorOf("StartMessageMoveTask", { SourceArn: arn("dlq"), DestinationArn: arn("f.fifo") })).message).toBe(
      "Value for parameter DestinationArn is invalid. Reason: source and destination queues must be of the same type (both FIFO or both standard).",
    );
    expect((await errorOf("StartMessageMoveTask", { SourceArn: arn("dlq"), MaxNumberOfMessagesPerSecond: 501 })).message).toBe(
      "Value 501 for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: Must be between 1 and 500.",
    );
    expect(await errorOf("CancelMessageMoveTask", { TaskHandle: "not-a-handle" })).toEqual({ type: "InvalidParameterValueException", message: "Value for parameter TaskHandle is invalid." });
    expect((await errorOf("ListMessageMoveTasks", { SourceArn: arn("dlq"), MaxResults: 11 })).message).toBe("Value 11 for parameter MaxResults is invalid. Reason: Must be between 1 and 10.");
    expect((await errorOf("ListMessageMoveTasks", { SourceArn: arn("ghost") })).message).toBe("The resource that you specified for the SourceArn parameter doesn't exist.");

    // The same refusals keep core's own words where no SQS parameter is involved (the admin API shows these).
    const refused = await h.queues.moveTasks.start("", { sourceQueueName: "dlq", destinationQueueName: "ghost" }).catch((err: Error) => err);
    expect((refused as Error).message).toBe("The destination queue ghost does not exist.");
  });

  it("a receive's out-of-range inputs are named as ReceiveMessage names them, in SQS's texts", async () => {
    const url = await h.createQueue("q");
    expect(await errorOf("ReceiveMessage", { QueueUrl: url, MaxNumberOfMessages: 11 })).toEqual({
      type: "InvalidParameterValueException",
      message: "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
    });
    expect((await errorOf("ReceiveMessage", { QueueUrl: url, VisibilityTimeout: 43201 })).message).toBe(
      "Value 43201 for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200.",
    );
    expect((await errorOf("ReceiveMessage", { QueueUrl: url, WaitTimeSeconds: 21 })).message).toBe(
      "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.",
    );

    // Core itself names its own inputs (what a protocol without SQS's names shows).
    const queue = await h.queues.getQueue("", "q");
    const refused = async (input: object): Promise<string> => ((await h.queues.receiveMessages(queue, input).catch((err: Error) => err)) as Error).message;
    expect(await refused({ maxMessages: 0 })).toBe("maxMessages must be an integer from 1 to 10, got 0.");
    expect(await refused({ visibilityTimeoutSeconds: -1 })).toBe("visibilitySeconds must be an integer from 0 to 43200, got -1.");
    expect(await refused({ waitTimeSeconds: 21 })).toBe("waitSeconds must be an integer from 0 to 20, got 21.");
  });

  it("a send's refusals, alone and as batch entries, in SQS's texts; core names them in its own words", async () => {
    const std = await h.createQueue("std");
    const fifo = await h.createQueue("f.fifo", { FifoQueue: "true" });
    const attribute = (value: object): object => ({ MessageAttributes: { a: value } });
    const tooMany = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`a${i}`, { DataType: "String", StringValue: "v" }]));
    // [queue, the entry's fields, SQS's code, SQS's text]
    const cases: Array<[string, object, string, string]> = [
      [std, { MessageBody: "" }, "MissingParameter", "The request must contain the parameter MessageBody."],
      [std, { MessageBody: "bad \u0000" }, "InvalidMessageContents", "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"],
      [std, { MessageAttributes: tooMany }, "InvalidParameterValue", "Number of message attributes [11] exceeds the allowed maximum [10]."],
      [std, { MessageAttributes: { "AWS.x": { DataType: "String", StringValue: "v" } } }, "InvalidParameterValue", "Message attribute name 'AWS.x' is invalid."],
      [std, attribute({ StringValue: "v" }), "InvalidParameterValue", "The message attribute 'a' must contain non-empty message attribute type."],
      [std, attribute({ DataType: "Strung", StringValue: "v" }), "InvalidParameterValue", "The type of message attribute 'a' is invalid. You must use only the following supported type prefixes: Binary, Number, String."],
      [std, attribute({ DataType: "Binary" }), "InvalidParameterValue", "The message attribute 'a' with type 'Binary' must use field 'Binary'."],
      [std, attribute({ DataType: "Number.kg", StringValue: "" }), "InvalidParameterValue", "Message (user) attribute 'a' must contain a non-empty value of type 'Number'."],
      [std, attribute({ DataType: "String", StringValue: "\u0000" }), "InvalidParameterValue", "The message attribute 'a' contains invalid characters."],
      [std, attribute({ DataType: "Number", StringValue: "ten" }), "InvalidParameterValue", "Can't cast the value of message (user) attribute 'a' to a number."],
      [std, { MessageDeduplicationId: "d" }, "InvalidParameterValue", "The request include parameter MessageDeduplicationId that is not valid for this queue type"],
      [std, { MessageGroupId: "a b" }, "InvalidParameterValue", "Value a b for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length."],
      [fifo, { MessageGroupId: "g", MessageDeduplicationId: "d", DelaySeconds: 5 }, "InvalidParameterValue", "Value 5 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type."],
      [fifo, { MessageGroupId: "g", MessageDeduplicationId: "a b" }, "InvalidParameterValue", "Value a b for parameter MessageDeduplicationId is invalid. Reason: MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length."],
    ];
    // Every case as an entry of a batch (at most 10 a batch, each to its own queue): each fails alone.
    const failed: Array<{ Code: string; Message: string }> = [];
    for (const url of [std, fifo]) {
      const entries = cases.filter(([queue]) => queue === url).map(([, fields], i) => ({ Id: `e${i}`, MessageBody: "m", ...fields }));
      for (let i = 0; i < entries.length; i += 10) {
        const res = await h.json("SendMessageBatch", { QueueUrl: url, Entries: entries.slice(i, i + 10) });
        expect(res.statusCode, res.body).toBe(200);
        failed.push(...(res.json() as { Failed: Array<{ Code: string; Message: string }> }).Failed);
      }
    }
    expect(failed.map((f) => [f.Code, f.Message])).toEqual(cases.map(([, , code, message]) => [code, message]));
    for (const [url, fields, code, message] of cases) {
      const alone = await errorOf("SendMessage", { QueueUrl: url, MessageBody: "m", ...fields });
      expect([alone.type.replace(/Exception$/, ""), alone.message]).toEqual([code === "MissingParameter" ? "MissingRequiredParameter" : code, message]);
    }
    // The query protocol's batch answer words an entry the same way.
    const query = await h.query({ Action: "SendMessageBatch", QueueUrl: std, "SendMessageBatchRequestEntry.1.Id": "e", "SendMessageBatchRequestEntry.1.MessageBody": "m", "SendMessageBatchRequestEntry.1.MessageDeduplicationId": "d" });
    expect(unescapeXml(xmlText(query.body, "Message") ?? "")).toBe("The request include parameter MessageDeduplicationId that is not valid for this queue type");

    // A FIFO send without what the queue needs: SendMessage's MissingParameter; a batch fails whole.
    expect(await errorOf("SendMessage", { QueueUrl: fifo, MessageBody: "m" })).toEqual({ type: "MissingRequiredParameterException", message: "The request must contain the parameter MessageGroupId." });
    expect(await errorOf("SendMessageBatch", { QueueUrl: fifo, Entries: [{ Id: "e", MessageBody: "m" }] })).toEqual({
      type: "InvalidParameterValueException",
      message: "The request must contain the parameter MessageGroupId.",
    });
    expect((await errorOf("SendMessage", { QueueUrl: fifo, MessageBody: "m", MessageGroupId: "g" })).message).toBe(
      "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
    );
    expect((await errorOf("ReceiveMessage", { QueueUrl: fifo, ReceiveRequestAttemptId: "a b" })).message).toBe(
      "Value a b for parameter ReceiveRequestAttemptId is invalid. Reason: ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
    );

    // Core names them in its own words (what the admin API shows).
    const [stdQueue, fifoQueue] = [await h.queues.getQueue("", "std"), await h.queues.getQueue("", "f.fifo")];
    const refused = async (queue: QueueRecord, input: SendInput): Promise<string> => ((await h.queues.sendMessage(queue, input).catch((err: Error) => err)) as Error).message;
    expect(await refused(stdQueue, { body: "" })).toBe("A message body must not be empty.");
    expect(await refused(stdQueue, { body: "m", groupId: "a b" })).toBe('The message group id "a b" is invalid: 1 to 128 letters, digits or punctuation characters.');
    expect(await refused(stdQueue, { body: "m", attributes: { n: { dataType: "Number", stringValue: "ten" } } })).toBe(
      'The value of the Number message attribute "n" is not a number of at most 38 digits from -10^128 to 10^126.',
    );
    expect(await refused(fifoQueue, { body: "m" })).toBe("A message to a FIFO queue needs a message group id.");
    expect(await refused(fifoQueue, { body: "m", groupId: "g", delaySeconds: 5 })).toBe("A FIFO queue takes no delay per message (the queue's own delay applies), got 5 seconds.");
  });

  it("receipt handle and visibility refusals, alone and as batch entries, in SQS's texts", async () => {
    const std = await h.createQueue("std");
    const fifo = await h.createQueue("f.fifo", { FifoQueue: "true", ContentBasedDeduplication: "true" });
    const receive = async (url: string, visibility: number): Promise<string> => {
      const res = await h.json("ReceiveMessage", { QueueUrl: url, VisibilityTimeout: visibility });
      return (res.json() as { Messages: Array<{ ReceiptHandle: string }> }).Messages[0]!.ReceiptHandle;
    };
    const batchFailures = async (action: string, url: string, entry: object): Promise<unknown> => {
      const res = await h.json(action, { QueueUrl: url, Entries: [{ Id: "e", ...entry }] });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { Failed: Array<{ Code: string; Message: string }> }).Failed.map((f) => [f.Code, f.Message]);
    };
    await h.json("SendMessage", { QueueUrl: std, MessageBody: "m" });
    await h.json("SendMessage", { QueueUrl: fifo, MessageBody: "m", MessageGroupId: "g" });

    // VisibilityTimeout out of range, and past 12 hours from the receive.
    const held = await receive(std, 43_200);
    const range = "Value 43201 for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200.";
    expect(await errorOf("ChangeMessageVisibility", { QueueUrl: std, ReceiptHandle: held, VisibilityTimeout: 43_201 })).toEqual({ type: "InvalidParameterValueException", message: range });
    expect(await batchFailures("ChangeMessageVisibilityBatch", std, { ReceiptHandle: held, VisibilityTimeout: 43_201 })).toEqual([["InvalidParameterValue", range]]);
    h.clock.advance(3_600_000);
    const beyond = "Value 43200 for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]";
    expect((await errorOf("ChangeMessageVisibility", { QueueUrl: std, ReceiptHandle: held, VisibilityTimeout: 43_200 })).message).toBe(beyond);
    expect(await batchFailures("ChangeMessageVisibilityBatch", std, { ReceiptHandle: held, VisibilityTimeout: 43_200 })).toEqual([["InvalidParameterValue", beyond]]);

    // A deleted message's handle can't change its visibility.
    expect((await h.json("DeleteMessage", { QueueUrl: std, ReceiptHandle: held })).statusCode).toBe(200);
    const gone = `Value ${held} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.`;
    expect((await errorOf("ChangeMessageVisibility", { QueueUrl: std, ReceiptHandle: held, VisibilityTimeout: 5 })).message).toBe(gone);
    expect(await batchFailures("ChangeMessageVisibilityBatch", std, { ReceiptHandle: held, VisibilityTimeout: 5 })).toEqual([["InvalidParameterValue", gone]]);

    // A FIFO handle whose lease ran out can't delete.
    const lapsed = await receive(fifo, 1);
    h.clock.advance(1_000);
    const expired = `Value ${lapsed} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.`;
    expect(await errorOf("DeleteMessage", { QueueUrl: fifo, ReceiptHandle: lapsed })).toEqual({ type: "InvalidParameterValueException", message: expired });
    expect(await batchFailures("DeleteMessageBatch", fifo, { ReceiptHandle: lapsed })).toEqual([["InvalidParameterValue", expired]]);
    const query = await h.query({ Action: "DeleteMessageBatch", QueueUrl: fifo, "DeleteMessageBatchRequestEntry.1.Id": "e", "DeleteMessageBatchRequestEntry.1.ReceiptHandle": lapsed });
    expect(unescapeXml(xmlText(query.body, "Message") ?? "")).toBe(expired);

    // Core's own words.
    const queue = await h.queues.getQueue("", "f.fifo");
    const [outcome] = await h.queues.deleteMessages(queue, [lapsed]);
    expect(outcome!.ok ? "deleted" : outcome!.error.message).toBe("The receipt handle has expired: its visibility timeout ran out, or the message was received again since.");
  });

  it("queue settings, names, tags, list sizes, purges and sizes refused in SQS's texts; core names them as its config does", async () => {
    await h.createQueue("dlq");
    const url = await h.createQueue("q");
    const attributeValue = (attribute: string, min: number, max: number): { type: string; message: string } => ({
      type: "InvalidAttributeValue",
      message: `Invalid value for the parameter ${attribute}. Reason: must be an integer from ${min} to ${max}.`,
    });
    const cases: Array<[Record<string, string>, string, number, number]> = [
      [{ VisibilityTimeout: "43201" }, "VisibilityTimeout", 0, 43_200],
      [{ DelaySeconds: "901" }, "DelaySeconds", 0, 900],
      [{ MessageRetentionPeriod: "59" }, "MessageRetentionPeriod", 60, 1_209_600],
      [{ MaximumMessageSize: "1023" }, "MaximumMessageSize", 1_024, 1_048_576],
      [{ ReceiveMessageWaitTimeSeconds: "21" }, "ReceiveMessageWaitTimeSeconds", 0, 20],
      [{ KmsDataKeyReusePeriodSeconds: "59" }, "KmsDataKeyReusePeriodSeconds", 60, 86_400],
      [{ "Sluice.DefaultPriority": "10" }, "Sluice.DefaultPriority", 0, 9],
      [{ RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn("dlq"), maxReceiveCount: 1001 }) }, "RedrivePolicy.maxReceiveCount", 1, 1000],
    ];
    for (const [attributes, attribute, min, max] of cases) {
      expect(await errorOf("CreateQueue", { QueueName: "new", Attributes: attributes })).toEqual(attributeValue(attribute, min, max));
      expect(await errorOf("SetQueueAttributes", { QueueUrl: url, Attributes: attributes })).toEqual(attributeValue(attribute, min, max));
    }

    const standardName = "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length";
    expect(await errorOf("CreateQueue", { QueueName: "bad name" })).toEqual({ type: "InvalidParameterValueException", message: standardName });
    expect((await errorOf("CreateQueue", { QueueName: "x".repeat(81) })).message).toBe(standardName);
    expect((await errorOf("CreateQueue", { QueueName: "f", Attributes: { FifoQueue: "true" } })).message).toBe(
      "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.",
    );

    const tags = (n: number, from = 0): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${from + i}`, "v"]));
    expect(await errorOf("CreateQueue", { QueueName: "tagged", tags: tags(51) })).toEqual({ type: "InvalidParameterValueException", message: "Too many tags added for queue tagged." });
    expect((await h.json("TagQueue", { QueueUrl: url, Tags: tags(50) })).statusCode).toBe(200);
    expect((await errorOf("TagQueue", { QueueUrl: url, Tags: tags(1, 50) })).message).toBe("Too many tags added for queue q.");

    expect(await errorOf("ListQueues", { MaxResults: 1001 })).toEqual({ type: "InvalidParameterValueException", message: "Value 1001 for parameter MaxResults is invalid. Reason: Must be between 1 and 1000." });
    expect((await errorOf("ListDeadLetterSourceQueues", { QueueUrl: url, MaxResults: 1001 })).message).toBe("Value 1001 for parameter MaxResults is invalid. Reason: Must be between 1 and 1000.");
    expect((await errorOf("SendMessage", { QueueUrl: url, MessageBody: "m", DelaySeconds: 901 })).message).toBe("Value 901 for parameter DelaySeconds is invalid. Reason: Must be between 0 and 900.");

    expect(await errorOf("SetQueueAttributes", { QueueUrl: url, Attributes: { FifoQueue: "true" } })).toEqual({ type: "InvalidAttributeName", message: "Unknown Attribute FifoQueue." });
    expect((await h.json("PurgeQueue", { QueueUrl: url })).statusCode).toBe(200);
    expect(await errorOf("PurgeQueue", { QueueUrl: url })).toEqual({ type: "PurgeQueueInProgress", message: "Only one PurgeQueue operation on q is allowed every 60 seconds." });
    const small = await h.createQueue("small", { MaximumMessageSize: "1024" });
    expect(await errorOf("SendMessage", { QueueUrl: small, MessageBody: "x".repeat(1025) })).toEqual({
      type: "InvalidParameterValueException",
      message: "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.",
    });

    // Core names them by its config's fields and its inputs (what the admin API shows).
    const refused = async (action: Promise<unknown>): Promise<string> => ((await action.catch((err: Error) => err)) as Error).message;
    expect(await refused(h.queues.createQueue("", { name: "new", config: { visibilityTimeoutSeconds: 43_201 } }))).toBe("visibilityTimeoutSeconds must be an integer from 0 to 43200, got 43201.");
    expect(await refused(h.queues.updateQueueConfig("", "q", { redrivePolicy: { deadLetterQueueName: "dlq", maxReceiveCount: 0 } }))).toBe(
      "redrivePolicy.maxReceiveCount must be an integer from 1 to 1000, got 0.",
    );
    expect(await refused(h.queues.createQueue("", { name: "bad name" }))).toBe(`A queue name is 1 to 80 characters: letters, digits, '-' and '_' (a FIFO queue's then ".fifo"), got "bad name".`);
    expect(await refused(h.queues.createQueue("", { name: "f", config: { fifoQueue: true } }))).toBe(`A FIFO queue's name ends in ".fifo", got "f".`);
    expect(await refused(h.queues.tagQueue("", "q", tags(1, 50)))).toBe("A queue has at most 50 tags; q would have 51.");
    expect(await refused(h.queues.listQueues("", { maxResults: 0 }))).toBe("maxResults must be an integer from 1 to 1000, got 0.");
    const queue = await h.queues.getQueue("", "q");
    expect(await refused(h.queues.sendMessage(queue, { body: "m", priority: 10 }))).toBe("priority must be an integer from 0 to 9, got 10.");
    expect(await refused(h.queues.updateQueueConfig("", "q", { fifoQueue: true }))).toBe("A queue's type (FIFO or standard) is set when it is created and can't change.");
    expect(await refused(h.queues.purgeQueue("", "q"))).toBe("Queue q was purged less than 60 seconds ago: a queue takes one purge a minute.");
    expect(await refused(h.queues.sendMessage(await h.queues.getQueue("", "small"), { body: "x".repeat(1025) }))).toBe("The message is 1025 bytes with its attributes; queue small takes at most 1024.");
  });

  it("a second active move task is refused with SQS's text", async () => {
    await h.createQueue("dlq");
    await h.createQueue("src", { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn("dlq"), maxReceiveCount: 3 }) });
    await h.queues.sendMessage(await h.queues.getQueue("", "dlq"), { body: "m" });
    // Rate-limited, on a clock that doesn't move: it stays RUNNING after its first batch.
    expect((await h.json("StartMessageMoveTask", { SourceArn: arn("dlq"), DestinationArn: arn("src"), MaxNumberOfMessagesPerSecond: 1 })).statusCode).toBe(200);
    expect(await errorOf("StartMessageMoveTask", { SourceArn: arn("dlq") })).toEqual({
      type: "InvalidParameterValueException",
      message: "There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
    });
  });

  it("a failed move task's FailureReason is SQS's code for core's reason", async () => {
    await h.createQueue("dlq");
    await h.createQueue("src", { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn("dlq"), maxReceiveCount: 3 }) });
    await h.createQueue("dest");
    await h.queues.sendMessage(await h.queues.getQueue("", "dlq"), { body: "m" });
    // The destination was checked when the task started; deleted before the runner's first step, it fails the task.
    await h.queues.moveTasks.runner.stop();
    const started = await h.queues.moveTasks.start("", { sourceQueueName: "dlq", destinationQueueName: "dest" });
    await h.queues.deleteQueue("", "dest");
    await h.queues.moveTasks.runner.start();
    await h.queues.moveTasks.runner.idle();
    expect((await h.queues.moveTasks.list("", "dlq"))[0]).toMatchObject({ taskHandle: started.taskHandle, status: "FAILED", failureReason: "DestinationQueueGone" });
    const listed = (await h.json("ListMessageMoveTasks", { SourceArn: arn("dlq") })).json() as { Results: Array<{ Status: string; FailureReason: string }> };
    expect(listed.Results[0]).toMatchObject({ Status: "FAILED", FailureReason: "AWS.SimpleQueueService.NonExistentQueue" });
  });
});
