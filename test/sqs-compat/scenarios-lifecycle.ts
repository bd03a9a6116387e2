/**
 * Message lifecycle beyond a single receive, through each real SDK: retention is enforced,
 * dead-letter redrive after maxReceiveCount (and ListDeadLetterSourceQueues), receipt-handle
 * edge cases, and the validation of message attributes and queue attribute names.
 */
import { describe, expect, it } from "vitest";
import { expectSqsError, sqsErrors, withMessage } from "./drivers.js";
import { type Harness, accountId } from "./harness.js";

export function lifecycleScenarios(h: Harness): void {
  describe("Retention", () => {
    it("a message older than MessageRetentionPeriod is never delivered and is not counted", async () => {
      const url = await h.createQueue({ MessageRetentionPeriod: "60" });
      await h.send(url, "old");
      h.clock.advance(30_000);
      await h.send(url, "young");
      h.clock.advance(30_000);
      // "old" is now exactly 60 s old: past retention (SQS keeps a message for the period, not beyond).
      h.clock.advance(1);
      expect((await h.receive(url, { MaxNumberOfMessages: 10, VisibilityTimeout: 600 })).map((m) => m.Body)).toEqual(["young"]);
      h.clock.advance(30_000);
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
    });
  });

  describe("Dead-letter queues", () => {
    it("moves a message to the DLQ when a receive would exceed maxReceiveCount", async () => {
      const dlqName = h.uniqueName("dlq");
      const dlqUrl = await h.createQueue(undefined, undefined, dlqName);
      const dlqArn = `arn:aws:sqs:us-east-1:${accountId}:${dlqName}`;
      const sourceUrl = await h.createQueue({
        VisibilityTimeout: "10",
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
      });
      const policy = JSON.parse((await h.attributes(sourceUrl, ["RedrivePolicy"])).RedrivePolicy!) as Record<string, unknown>;
      expect(policy.deadLetterTargetArn).toBe(dlqArn);
      expect(Number(policy.maxReceiveCount)).toBe(2);

      const sent = await h.send(sourceUrl, "poison");
      for (let attempt = 1; attempt <= 2; attempt++) {
        const [m] = await h.receive(sourceUrl, { AttributeNames: ["ApproximateReceiveCount"] as never });
        expect(m!.MessageId).toBe(sent.MessageId);
        expect(m!.Attributes?.ApproximateReceiveCount).toBe(String(attempt));
        h.clock.advance(10_000);
      }
      expect(await h.receive(sourceUrl, { MaxNumberOfMessages: 10 })).toEqual([]);
      expect(await h.counts(sourceUrl)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
      const [dead] = await h.receive(dlqUrl);
      expect(dead!.MessageId).toBe(sent.MessageId);
      expect(dead!.Body).toBe("poison");
    });

    it("ListDeadLetterSourceQueues lists the queues whose RedrivePolicy targets a DLQ", async () => {
      const dlqName = h.uniqueName("dlq-src");
      const dlqUrl = await h.createQueue(undefined, undefined, dlqName);
      const redrive = { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:us-east-1:${accountId}:${dlqName}`, maxReceiveCount: 5 }) };
      const sources = [await h.createQueue(redrive), await h.createQueue(redrive)];
      await h.createQueue();
      const res = await h.driver.call("ListDeadLetterSourceQueues", { QueueUrl: dlqUrl });
      expect([...(res.queueUrls ?? [])].sort()).toEqual([...sources].sort());
    });

    it("rejects a RedrivePolicy naming a queue that does not exist", async () => {
      const ghostArn = `arn:aws:sqs:us-east-1:${accountId}:${h.uniqueName("ghost-dlq")}`;
      const name = h.uniqueName("bad-redrive");
      let failed = false;
      try {
        await h.driver.call("CreateQueue", { QueueName: name, Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: ghostArn, maxReceiveCount: 3 }) } });
      } catch {
        failed = true;
      }
      expect(failed).toBe(true);
      await expectSqsError(h.driver, "GetQueueUrl", { QueueName: name }, sqsErrors.QueueDoesNotExist);
    });
  });

  describe("Receipt handles", () => {
    it("deleting an already-deleted message with its handle succeeds (idempotent)", async () => {
      const url = await h.createQueue();
      await h.send(url, "twice");
      const [m] = await h.receive(url);
      await h.driver.call("DeleteMessage", { QueueUrl: url, ReceiptHandle: m!.ReceiptHandle! });
      await h.driver.call("DeleteMessage", { QueueUrl: url, ReceiptHandle: m!.ReceiptHandle! });
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
    });

    it("a handle from another queue is ReceiptHandleIsInvalid there and deletes nothing", async () => {
      const a = await h.createQueue();
      const b = await h.createQueue();
      await h.send(a, "mine");
      const [m] = await h.receive(a);
      await expectSqsError(h.driver, "DeleteMessage", { QueueUrl: b, ReceiptHandle: m!.ReceiptHandle! }, sqsErrors.ReceiptHandleIsInvalid);
      expect(await h.counts(a)).toEqual({ visible: 0, notVisible: 1, delayed: 0 });
    });

    it("a handle edited to name another message of the same receive is ReceiptHandleIsInvalid and touches nothing", async () => {
      const url = await h.createQueue();
      await h.send(url, "first");
      await h.send(url, "second");
      const [first, second] = await h.receive(url, { MaxNumberOfMessages: 2 });
      expect(second).toBeDefined();
      // Each handle names its message by seq, e.g. `sl4:<queue>:<seq>:<token>:<tag>`: point one at the other's seq.
      const seqOf = (handle: string): string => handle.split(":")[2]!;
      const forged = first!.ReceiptHandle!.replace(`:${seqOf(first!.ReceiptHandle!)}:`, `:${seqOf(second!.ReceiptHandle!)}:`);
      expect(forged).not.toBe(first!.ReceiptHandle);
      await expectSqsError(h.driver, "DeleteMessage", { QueueUrl: url, ReceiptHandle: forged }, sqsErrors.ReceiptHandleIsInvalid);
      await expectSqsError(h.driver, "ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: forged, VisibilityTimeout: 0 }, sqsErrors.ReceiptHandleIsInvalid);
      const batch = await h.driver.call("DeleteMessageBatch", { QueueUrl: url, Entries: [{ Id: "forged", ReceiptHandle: forged }] });
      expect(batch.Failed).toEqual([expect.objectContaining({ Id: "forged", Code: "ReceiptHandleIsInvalid", SenderFault: true })]);
      // A leading zero names the same message, but is not the handle the server wrote.
      const padded = first!.ReceiptHandle!.replace(`:${seqOf(first!.ReceiptHandle!)}:`, `:0${seqOf(first!.ReceiptHandle!)}:`);
      await expectSqsError(h.driver, "DeleteMessage", { QueueUrl: url, ReceiptHandle: padded }, sqsErrors.ReceiptHandleIsInvalid);
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 2, delayed: 0 });
      await h.driver.call("DeleteMessage", { QueueUrl: url, ReceiptHandle: second!.ReceiptHandle! });
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 1, delayed: 0 });
    });
  });

  describe("Validation", () => {
    it("rejects bad message attributes with InvalidParameterValue and stores nothing", async () => {
      const url = await h.createQueue();
      const attempts: Array<Record<string, { DataType: string; StringValue?: string; BinaryValue?: Uint8Array }>> = [
        { "AWS.reserved": { DataType: "String", StringValue: "x" } },
        { ".leading": { DataType: "String", StringValue: "x" } },
        { n: { DataType: "Number", StringValue: "12abc" } },
        { s: { DataType: "String", StringValue: "" } },
        { t: { DataType: "Float", StringValue: "1.5" } },
        Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`a${i}`, { DataType: "String", StringValue: "v" }])),
      ];
      for (const MessageAttributes of attempts) {
        await expectSqsError(h.driver, "SendMessage", { QueueUrl: url, MessageBody: "x", MessageAttributes }, sqsErrors.InvalidParameterValue);
      }
      // SQS's words for an empty value (LocalStack's AWS-validated test_send_message_with_empty_string_attribute).
      await expectSqsError(
        h.driver,
        "SendMessage",
        { QueueUrl: url, MessageBody: "x", MessageAttributes: { ErrorDetails: { DataType: "String", StringValue: "" } } },
        withMessage(sqsErrors.InvalidParameterValue, "Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'."),
      );
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
    });

    it("rejects WaitTimeSeconds above 20 with InvalidParameterValue", async () => {
      const url = await h.createQueue();
      await expectSqsError(h.driver, "ReceiveMessage", { QueueUrl: url, WaitTimeSeconds: 21 }, sqsErrors.InvalidParameterValue);
    });

    it("rejects an unknown attribute in SetQueueAttributes with InvalidAttributeName", async () => {
      const url = await h.createQueue();
      await expectSqsError(h.driver, "SetQueueAttributes", { QueueUrl: url, Attributes: { NotAnAttribute: "1" } as never }, sqsErrors.InvalidAttributeName);
    });
  });
}
