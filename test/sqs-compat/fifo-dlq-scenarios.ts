/**
 * FIFO queues, dead-letter queues, message move tasks and permissions through a real SDK. Written
 * once against a loose driver (action name + the model's PascalCase input), run by
 * fifo-dlq-v3.test.ts (JSON 1.0) and fifo-dlq-v2.test.ts (query/XML). Time moves only by
 * ManualClock; background move tasks are awaited through the in-process runner, never by sleeping.
 */
import { describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/core/clock.js";
import { type TestServer, startTestServer } from "../support/server.js";

/* eslint-disable @typescript-eslint/no-explicit-any -- SDK results are read loosely, per the model. */
export interface LooseDriver {
  call(action: string, input: Record<string, unknown>): Promise<any>;
  /** How this SDK identifies an error: by model shape name (v3) or query code (v2). */
  errorCodeOf(error: unknown): string | undefined;
  expectedCodeOf(expected: { shape: string; code: string }): string;
  /** How this SDK names the system-attribute list of ReceiveMessage. */
  systemAttributesParam: "MessageSystemAttributeNames" | "AttributeNames";
  destroy(): void;
}

export interface FifoDlqContext {
  server(): TestServer;
  clock(): ManualClock;
  driver(): LooseDriver;
  /** Makes a driver for another server (restart scenarios). */
  driverFor(server: TestServer): LooseDriver;
}

const accountId = "000000000000";
let counter = 0;
const unique = (stem: string): string => `t${process.pid}-${stem}-${++counter}`;
const arnOf = (name: string): string => `arn:aws:sqs:us-east-1:${accountId}:${name}`;
const nameOfUrl = (url: string): string => url.slice(url.lastIndexOf("/") + 1);

export function fifoDlqScenarios(ctx: FifoDlqContext): void {
  // The restart scenario runs on servers of its own: while it does, these point at them.
  let current: { server: TestServer; driver: LooseDriver } | undefined;
  const server = (): TestServer => current?.server ?? ctx.server();
  const driver = (): LooseDriver => current?.driver ?? ctx.driver();
  const call = (action: string, input: Record<string, unknown>): Promise<any> => driver().call(action, input);

  async function createQueue(name: string, attributes: Record<string, string> = {}): Promise<string> {
    return (await call("CreateQueue", { QueueName: name, Attributes: attributes })).QueueUrl;
  }

  async function receive(url: string, extra: Record<string, unknown> = {}): Promise<any[]> {
    const res = await call("ReceiveMessage", { QueueUrl: url, [driver().systemAttributesParam]: ["All"], ...extra });
    return res.Messages ?? [];
  }

  async function expectError(p: Promise<unknown>, expected: { shape: string; code: string }): Promise<void> {
    let caught: unknown;
    try {
      await p;
    } catch (err) {
      caught = err;
    }
    expect(caught, `expected ${expected.code}`).toBeDefined();
    expect(driver().errorCodeOf(caught)).toBe(driver().expectedCodeOf(expected));
  }

  const invalidParameterValue = { shape: "InvalidParameterValue", code: "InvalidParameterValue" };

  describe("FIFO queues", () => {
    it("order within a group, deduplication with the original MessageId, SequenceNumber, FIFO system attributes", async () => {
      const url = await createQueue(`${unique("f")}.fifo`, { FifoQueue: "true", ContentBasedDeduplication: "true" });
      const a1 = await call("SendMessage", { QueueUrl: url, MessageBody: "a1", MessageGroupId: "a" });
      expect(a1.SequenceNumber).toMatch(/^\d{20}$/);
      const dup = await call("SendMessage", { QueueUrl: url, MessageBody: "a1", MessageGroupId: "a" });
      expect([dup.MessageId, dup.SequenceNumber]).toEqual([a1.MessageId, a1.SequenceNumber]);
      const batch = await call("SendMessageBatch", {
        QueueUrl: url,
        Entries: [
          { Id: "e1", MessageBody: "a2", MessageGroupId: "a", MessageDeduplicationId: "explicit-a2" },
          { Id: "e2", MessageBody: "b1", MessageGroupId: "b" },
        ],
      });
      expect(batch.Successful.map((e: any) => e.SequenceNumber > a1.SequenceNumber)).toEqual([true, true]);
      const got = await receive(url, { MaxNumberOfMessages: 10 });
      expect(got.map((m) => m.Body)).toEqual(["a1", "a2", "b1"]);
      expect(got[0].Attributes).toMatchObject({ MessageGroupId: "a", SequenceNumber: a1.SequenceNumber });
      expect(got[0].Attributes.MessageDeduplicationId).toMatch(/^[0-9a-f]{64}$/);
      expect(got[1].Attributes.MessageDeduplicationId).toBe("explicit-a2");
    });

    it("a receive returns as many messages of the oldest available group as it can; other consumers get the other groups", async () => {
      const url = await createQueue(`${unique("f")}.fifo`, { FifoQueue: "true", ContentBasedDeduplication: "true" });
      // "orders" is older; "billing" sorts first by name, so only age can put "orders" first.
      for (const body of ["orders-1", "orders-2", "orders-3"]) await call("SendMessage", { QueueUrl: url, MessageBody: body, MessageGroupId: "orders" });
      await call("SendMessage", { QueueUrl: url, MessageBody: "billing-1", MessageGroupId: "billing" });
      const first = await receive(url, { MaxNumberOfMessages: 2 });
      expect(first.map((m) => m.Body)).toEqual(["orders-1", "orders-2"]);
      const second = await receive(url, { MaxNumberOfMessages: 2 });
      expect(second.map((m) => m.Body)).toEqual(["billing-1"]);
      for (const m of first) await call("DeleteMessage", { QueueUrl: url, ReceiptHandle: m.ReceiptHandle });
      expect((await receive(url, { MaxNumberOfMessages: 10 })).map((m) => m.Body)).toEqual(["orders-3"]);
    });

    it("rejects a send without MessageGroupId (MissingParameter, in SQS's words) or with a per-message delay", async () => {
      const url = await createQueue(`${unique("f")}.fifo`, { FifoQueue: "true", ContentBasedDeduplication: "true" });
      const noGroup = call("SendMessage", { QueueUrl: url, MessageBody: "x" });
      await expectError(noGroup, { shape: "MissingParameter", code: "MissingParameter" });
      await expect(noGroup).rejects.toThrow(/^The request must contain the parameter MessageGroupId\.$/);
      await expectError(call("SendMessage", { QueueUrl: url, MessageBody: "x", MessageGroupId: "g", DelaySeconds: 5 }), invalidParameterValue);
    });

    it("SendMessageBatch: an entry without MessageGroupId or a needed MessageDeduplicationId fails the whole call; other bad entries fail alone", async () => {
      async function callError(p: Promise<unknown>): Promise<unknown> {
        try {
          await p;
        } catch (err) {
          return err;
        }
        throw new Error("expected the call to fail");
      }
      const depth = async (url: string): Promise<string> =>
        (await call("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages"] })).Attributes.ApproximateNumberOfMessages;
      const explicit = await createQueue(`${unique("f")}.fifo`, { FifoQueue: "true" });
      const noGroup = await callError(
        call("SendMessageBatch", {
          QueueUrl: explicit,
          Entries: [
            { Id: "ok", MessageBody: "x", MessageGroupId: "g", MessageDeduplicationId: "d1" },
            { Id: "nogroup", MessageBody: "y", MessageDeduplicationId: "d2" },
          ],
        }),
      );
      expect(driver().errorCodeOf(noGroup)).toBe(driver().expectedCodeOf(invalidParameterValue));
      expect((noGroup as Error).message).toBe("The request must contain the parameter MessageGroupId.");
      const noDedup = await callError(
        call("SendMessageBatch", {
          QueueUrl: explicit,
          Entries: [
            { Id: "ok", MessageBody: "x", MessageGroupId: "g", MessageDeduplicationId: "d1" },
            { Id: "nodedup", MessageBody: "y", MessageGroupId: "g" },
          ],
        }),
      );
      expect(driver().errorCodeOf(noDedup)).toBe(driver().expectedCodeOf(invalidParameterValue));
      expect((noDedup as Error).message).toBe("The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly");
      expect(await depth(explicit)).toBe("0"); // nothing of either batch was sent

      const contentBased = await createQueue(`${unique("f")}.fifo`, { FifoQueue: "true", ContentBasedDeduplication: "true" });
      const mixed = await call("SendMessageBatch", {
        QueueUrl: contentBased,
        Entries: [
          { Id: "ok", MessageBody: "x", MessageGroupId: "g" },
          { Id: "badattr", MessageBody: "y", MessageGroupId: "g", MessageAttributes: { n: { DataType: "Number", StringValue: "abc" } } },
          { Id: "delay", MessageBody: "z", MessageGroupId: "g", DelaySeconds: 5 },
        ],
      });
      expect(mixed.Successful.map((e: any) => e.Id)).toEqual(["ok"]);
      expect(mixed.Failed.map((e: any) => [e.Id, e.Code, e.SenderFault])).toEqual([
        ["badattr", "InvalidParameterValue", true],
        ["delay", "InvalidParameterValue", true],
      ]);
      expect(await depth(contentBased)).toBe("1");
    });

    it("SetQueueAttributes FifoQueue: `true` again on a FIFO queue is accepted; a type change is InvalidAttributeValue, or InvalidAttributeName on a standard queue", async () => {
      const url = await createQueue(`${unique("f")}.fifo`, { FifoQueue: "true" });
      // Infrastructure tools re-apply every attribute they manage, FifoQueue included.
      await call("SetQueueAttributes", { QueueUrl: url, Attributes: { FifoQueue: "true", VisibilityTimeout: "45" } });
      expect((await call("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["FifoQueue", "VisibilityTimeout"] })).Attributes).toEqual({ FifoQueue: "true", VisibilityTimeout: "45" });
      const typeChange = call("SetQueueAttributes", { QueueUrl: url, Attributes: { FifoQueue: "false" } });
      await expectError(typeChange, { shape: "InvalidAttributeValue", code: "InvalidAttributeValue" });
      await expect(typeChange).rejects.toThrow(/^Invalid value for the parameter FifoQueue\. Reason: Modifying queue type is not supported\.$/);
      const standard = await createQueue(unique("s"));
      const onStandard = call("SetQueueAttributes", { QueueUrl: standard, Attributes: { FifoQueue: "true" } });
      await expectError(onStandard, { shape: "InvalidAttributeName", code: "InvalidAttributeName" });
      await expect(onStandard).rejects.toThrow(/^Unknown Attribute FifoQueue\.$/);
    });

    it("a standard queue refuses FIFO-only attributes in SQS's words", async () => {
      // LocalStack's AWS-validated test_create_standard_queue_with_fifo_attribute_raises_error.
      const invalidName = { shape: "InvalidAttributeName", code: "InvalidAttributeName" };
      for (const [attribute, value, message] of [
        ["ContentBasedDeduplication", "true", "Unknown Attribute ContentBasedDeduplication."],
        ["DeduplicationScope", "messageGroup", "You can specify the DeduplicationScope only when FifoQueue is set to true."],
        ["FifoThroughputLimit", "perMessageGroupId", "You can specify the FifoThroughputLimit only when FifoQueue is set to true."],
      ] as const) {
        const created = call("CreateQueue", { QueueName: unique("s"), Attributes: { [attribute]: value } });
        await expectError(created, invalidName);
        await expect(created).rejects.toThrow(message);
      }
    });

    it("holds a group while a message is in flight and replays a ReceiveRequestAttemptId", async () => {
      const url = await createQueue(`${unique("f")}.fifo`, { FifoQueue: "true", ContentBasedDeduplication: "true" });
      for (const body of ["a1", "a2", "b1"]) await call("SendMessage", { QueueUrl: url, MessageBody: body, MessageGroupId: body[0] });
      const first = await receive(url, { MaxNumberOfMessages: 1, ReceiveRequestAttemptId: "attempt-1" });
      const retry = await receive(url, { MaxNumberOfMessages: 1, ReceiveRequestAttemptId: "attempt-1" });
      expect(retry.map((m) => m.ReceiptHandle)).toEqual(first.map((m) => m.ReceiptHandle));
      expect((await receive(url, { MaxNumberOfMessages: 10 })).map((m) => m.Body)).toEqual(["b1"]);
      await call("DeleteMessage", { QueueUrl: url, ReceiptHandle: first[0].ReceiptHandle });
      expect((await receive(url, { MaxNumberOfMessages: 10 })).map((m) => m.Body)).toEqual(["a2"]);
    });

    it("refuses to delete with a handle whose visibility timeout ran out (\"The receipt handle has expired\"); an extended lease still deletes", async () => {
      const url = await createQueue(`${unique("f")}.fifo`, { FifoQueue: "true", ContentBasedDeduplication: "true", VisibilityTimeout: "10" });
      for (const body of ["a1", "b1", "c1"]) await call("SendMessage", { QueueUrl: url, MessageBody: body, MessageGroupId: body[0] });
      const got = await receive(url, { MaxNumberOfMessages: 10 });
      const handle = (body: string): string => got.find((m) => m.Body === body).ReceiptHandle;
      // a1's lease is extended past the queue's 10 s; b1's and c1's run out.
      await call("ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: handle("a1"), VisibilityTimeout: 30 });
      ctx.clock().advance(10_000);
      let caught: unknown;
      try {
        await call("DeleteMessage", { QueueUrl: url, ReceiptHandle: handle("b1") });
      } catch (err) {
        caught = err;
      }
      expect(driver().errorCodeOf(caught)).toBe(driver().expectedCodeOf(invalidParameterValue));
      expect((caught as Error).message).toBe(`Value ${handle("b1")} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.`);
      const batch = await call("DeleteMessageBatch", {
        QueueUrl: url,
        Entries: [
          { Id: "a", ReceiptHandle: handle("a1") },
          { Id: "c", ReceiptHandle: handle("c1") },
        ],
      });
      expect(batch.Successful.map((e: any) => e.Id)).toEqual(["a"]);
      expect(batch.Failed).toEqual([
        expect.objectContaining({ Id: "c", Code: "InvalidParameterValue", SenderFault: true, Message: `Value ${handle("c1")} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.` }),
      ]);
      // Neither expired delete removed its message: both come back, with new handles that work.
      const again = await receive(url, { MaxNumberOfMessages: 10 });
      expect(again.map((m) => m.Body).sort()).toEqual(["b1", "c1"]);
      // The first handle stays expired once the message is received again, and (unlike on a
      // standard queue) can't change the new lease either.
      await expectError(call("DeleteMessage", { QueueUrl: url, ReceiptHandle: handle("b1") }), invalidParameterValue);
      await expectError(call("ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: handle("b1"), VisibilityTimeout: 0 }), invalidParameterValue);
      for (const m of again) await call("DeleteMessage", { QueueUrl: url, ReceiptHandle: m.ReceiptHandle });
      expect((await call("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"] })).Attributes).toEqual({
        ApproximateNumberOfMessages: "0",
        ApproximateNumberOfMessagesNotVisible: "0",
      });
    });

    it("ChangeMessageVisibility (and a batch entry) with a handle whose visibility timeout ran out succeeds and changes nothing, as on a standard queue", async () => {
      // Unlike DeleteMessage, no "The receipt handle has expired" (docs/sqs-compatibility.md,
      // "Receipt handles after a lease ends").
      const url = await createQueue(`${unique("f")}.fifo`, { FifoQueue: "true", ContentBasedDeduplication: "true", VisibilityTimeout: "10" });
      for (const body of ["a1", "a2", "b1"]) await call("SendMessage", { QueueUrl: url, MessageBody: body, MessageGroupId: body[0] });
      const got = await receive(url, { MaxNumberOfMessages: 10 });
      expect(got.map((m) => m.Body)).toEqual(["a1", "a2", "b1"]);
      const handle = (body: string): string => got.find((m) => m.Body === body).ReceiptHandle;
      ctx.clock().advance(10_000);
      await call("ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: handle("a1"), VisibilityTimeout: 60 });
      const batch = await call("ChangeMessageVisibilityBatch", {
        QueueUrl: url,
        Entries: [
          { Id: "a2", ReceiptHandle: handle("a2"), VisibilityTimeout: 60 },
          { Id: "b1", ReceiptHandle: handle("b1"), VisibilityTimeout: 60 },
        ],
      });
      expect(batch.Successful.map((e: any) => e.Id).sort()).toEqual(["a2", "b1"]);
      expect(batch.Failed ?? []).toEqual([]);
      // Nothing was hidden again: every message is visible and comes back (in order within its
      // group; groups in any order), received twice.
      expect((await call("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"] })).Attributes).toEqual({
        ApproximateNumberOfMessages: "3",
        ApproximateNumberOfMessagesNotVisible: "0",
      });
      const again = await receive(url, { MaxNumberOfMessages: 10 });
      expect(again.filter((m) => m.Body.startsWith("a")).map((m) => m.Body)).toEqual(["a1", "a2"]);
      expect(again.map((m) => [m.Body, m.Attributes.ApproximateReceiveCount]).sort()).toEqual([
        ["a1", "2"],
        ["a2", "2"],
        ["b1", "2"],
      ]);
    });

    it("keeps order and delivers exactly once with many concurrent producers and consumers", async () => {
      const url = await createQueue(`${unique("f")}.fifo`, { FifoQueue: "true" });
      const groups = 6;
      const perGroup = 20;
      const producers = Array.from({ length: groups }, async (_, g) => {
        for (let i = 0; i < perGroup; i += 2) {
          // Batches of two, one in three sent twice (a producer retry): dedup must absorb it.
          const entries = [i, i + 1].map((n) => ({ Id: `m${n}`, MessageBody: `${g}:${n}`, MessageGroupId: `g${g}`, MessageDeduplicationId: `${g}-${n}` }));
          await call("SendMessageBatch", { QueueUrl: url, Entries: entries });
          if (i % 3 === 0) await call("SendMessageBatch", { QueueUrl: url, Entries: entries });
        }
      });
      const seen = new Map<string, number[]>();
      let received = 0;
      const consumers = Array.from({ length: 4 }, async (_, c) => {
        while (received < groups * perGroup) {
          const got = await receive(url, { MaxNumberOfMessages: 3 + c, WaitTimeSeconds: 0 });
          for (const m of got) {
            const [g, n] = m.Body.split(":");
            seen.set(g, [...(seen.get(g) ?? []), Number(n)]);
            received++;
          }
          if (got.length > 0) {
            await call("DeleteMessageBatch", { QueueUrl: url, Entries: got.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })) });
          }
        }
      });
      await Promise.all([...producers, ...consumers]);
      expect(received).toBe(groups * perGroup);
      for (let g = 0; g < groups; g++) expect(seen.get(String(g))).toEqual(Array.from({ length: perGroup }, (_, n) => n));
    });
  });

  describe("dead-letter queues", () => {
    it("moves a message to the DLQ after maxReceiveCount, with DeadLetterQueueSourceArn and the original SentTimestamp", async () => {
      const dlqName = unique("dlq");
      const dlqUrl = await createQueue(dlqName);
      const srcName = unique("src");
      const srcUrl = await createQueue(srcName, { VisibilityTimeout: "0" });
      await call("SetQueueAttributes", { QueueUrl: srcUrl, Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(dlqName), maxReceiveCount: 2 }) } });
      const attrs = (await call("GetQueueAttributes", { QueueUrl: srcUrl, AttributeNames: ["RedrivePolicy"] })).Attributes;
      expect(JSON.parse(attrs.RedrivePolicy)).toEqual({ deadLetterTargetArn: arnOf(dlqName), maxReceiveCount: 2 });
      const sent = await call("SendMessage", { QueueUrl: srcUrl, MessageBody: "poison", MessageAttributes: { k: { DataType: "String", StringValue: "v" } } });
      const first = await receive(srcUrl);
      await receive(srcUrl);
      expect(await receive(srcUrl)).toEqual([]);
      const [dead] = await receive(dlqUrl, { MessageAttributeNames: ["All"] });
      expect(dead.MessageId).toBe(sent.MessageId);
      expect(dead.Body).toBe("poison");
      expect(dead.MessageAttributes.k.StringValue).toBe("v");
      expect(dead.Attributes.DeadLetterQueueSourceArn).toBe(arnOf(srcName));
      expect(dead.Attributes.SentTimestamp).toBe(first[0].Attributes.SentTimestamp);
    });

    it("enforces RedriveAllowPolicy and queue types, and lists source queues with pagination", async () => {
      const closed = unique("closed");
      await createQueue(closed, { RedriveAllowPolicy: JSON.stringify({ redrivePermission: "denyAll" }) });
      await expectError(createQueue(unique("src"), { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(closed), maxReceiveCount: 3 }) }), invalidParameterValue);
      const fifoDlq = `${unique("fdlq")}.fifo`;
      await createQueue(fifoDlq, { FifoQueue: "true" });
      await expectError(createQueue(unique("src"), { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(fifoDlq), maxReceiveCount: 3 }) }), invalidParameterValue);

      const dlqName = unique("dlq");
      const dlqUrl = await createQueue(dlqName, { RedriveAllowPolicy: JSON.stringify({ redrivePermission: "allowAll" }) });
      const sources = [];
      for (let i = 0; i < 3; i++) sources.push(await createQueue(unique("src"), { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(dlqName), maxReceiveCount: 3 }) }));
      const all = await call("ListDeadLetterSourceQueues", { QueueUrl: dlqUrl });
      expect(all.queueUrls).toEqual(sources);
      const page1 = await call("ListDeadLetterSourceQueues", { QueueUrl: dlqUrl, MaxResults: 2 });
      expect(page1.queueUrls).toEqual(sources.slice(0, 2));
      const page2 = await call("ListDeadLetterSourceQueues", { QueueUrl: dlqUrl, MaxResults: 2, NextToken: page1.NextToken });
      expect(page2.queueUrls).toEqual(sources.slice(2));
      expect(page2.NextToken).toBeUndefined();
    });
  });

  /** A DLQ holding `count` messages dead-lettered from a fresh source queue. */
  async function deadLettered(count: number): Promise<{ srcUrl: string; dlqUrl: string; dlqName: string }> {
    const dlqName = unique("dlq");
    const dlqUrl = await createQueue(dlqName);
    const srcUrl = await createQueue(unique("src"), { VisibilityTimeout: "0", RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(dlqName), maxReceiveCount: 1 }) });
    for (let i = 0; i < count; i += 10) {
      const entries = Array.from({ length: Math.min(10, count - i) }, (_, k) => ({ Id: `m${k}`, MessageBody: `m${i + k}` }));
      await call("SendMessageBatch", { QueueUrl: srcUrl, Entries: entries });
    }
    for (let i = 0; i < count * 2 && (await queueDepth(dlqUrl)) < count; i++) await receive(srcUrl, { MaxNumberOfMessages: 10 });
    expect(await queueDepth(dlqUrl)).toBe(count);
    return { srcUrl, dlqUrl, dlqName };
  }

  async function queueDepth(url: string): Promise<number> {
    const attrs = (await call("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages"] })).Attributes;
    return Number(attrs.ApproximateNumberOfMessages);
  }

  async function latestTask(dlqName: string): Promise<any> {
    return (await call("ListMessageMoveTasks", { SourceArn: arnOf(dlqName) })).Results[0];
  }

  describe("message move tasks", () => {
    it("redrives a DLQ back to its source queue", async () => {
      const { srcUrl, dlqUrl, dlqName } = await deadLettered(25);
      const { TaskHandle } = await call("StartMessageMoveTask", { SourceArn: arnOf(dlqName) });
      expect(typeof TaskHandle).toBe("string");
      await server().queues.moveTasks.runner.idle();
      expect(await latestTask(dlqName)).toMatchObject({ Status: "COMPLETED", SourceArn: arnOf(dlqName), ApproximateNumberOfMessagesMoved: 25, ApproximateNumberOfMessagesToMove: 25 });
      expect(await queueDepth(dlqUrl)).toBe(0);
      expect(await queueDepth(srcUrl)).toBe(25);
    });

    it("moves at a rate to a destination, and cancels", async () => {
      const { dlqName } = await deadLettered(12);
      const destName = unique("dest");
      const destUrl = await createQueue(destName);
      const { TaskHandle } = await call("StartMessageMoveTask", { SourceArn: arnOf(dlqName), DestinationArn: arnOf(destName), MaxNumberOfMessagesPerSecond: 5 });
      await server().queues.moveTasks.runner.idle();
      expect(await latestTask(dlqName)).toMatchObject({ Status: "RUNNING", TaskHandle, DestinationArn: arnOf(destName), MaxNumberOfMessagesPerSecond: 5, ApproximateNumberOfMessagesMoved: 5 });
      // SQS's recorded answer: InvalidParameterValue, in these words.
      const second = call("StartMessageMoveTask", { SourceArn: arnOf(dlqName) });
      await expectError(second, invalidParameterValue);
      await expect(second).rejects.toThrow(/^There is already a task running\. Only one active task is allowed for a source queue arn at a given time\.$/);
      const cancelled = await call("CancelMessageMoveTask", { TaskHandle });
      expect(cancelled.ApproximateNumberOfMessagesMoved).toBe(5);
      await server().queues.moveTasks.runner.idle();
      ctx.clock().advance(2_000);
      await server().queues.moveTasks.runner.idle();
      const task = await latestTask(dlqName);
      expect(task).toMatchObject({ Status: "CANCELLED", ApproximateNumberOfMessagesMoved: 5 });
      expect(task.TaskHandle).toBeUndefined();
      expect(await queueDepth(destUrl)).toBe(5);
    });

    it("rejects a source that is not a dead-letter queue, a malformed task handle and an unknown task, in SQS's words", async () => {
      const plain = unique("plain");
      await createQueue(plain);
      const notDlq = call("StartMessageMoveTask", { SourceArn: arnOf(plain) });
      await expectError(notDlq, invalidParameterValue);
      await expect(notDlq).rejects.toThrow(/^Source queue must be configured as a Dead Letter Queue\.$/);
      const missingSource = call("StartMessageMoveTask", { SourceArn: arnOf(unique("missing")) });
      await expectError(missingSource, { shape: "ResourceNotFoundException", code: "ResourceNotFoundException" });
      await expect(missingSource).rejects.toThrow(/^The resource that you specified for the SourceArn parameter doesn't exist\.$/);
      const malformed = call("CancelMessageMoveTask", { TaskHandle: "no-such-task" });
      await expectError(malformed, invalidParameterValue);
      await expect(malformed).rejects.toThrow(/^Value for parameter TaskHandle is invalid\.$/);
      const unknown = call("CancelMessageMoveTask", { TaskHandle: "00000000-0000-7000-8000-000000000000" });
      await expectError(unknown, { shape: "ResourceNotFoundException", code: "ResourceNotFoundException" });
      await expect(unknown).rejects.toThrow(/^Task does not exist\.$/);
    });

    it("resumes a move task after a server restart on the same data directory", async () => {
      const first = await startTestServer({ clock: ctx.clock() });
      current = { server: first, driver: ctx.driverFor(first) };
      let second: TestServer | undefined;
      try {
        const { srcUrl, dlqName } = await deadLettered(6);
        await call("StartMessageMoveTask", { SourceArn: arnOf(dlqName), MaxNumberOfMessagesPerSecond: 2 });
        await first.queues.moveTasks.runner.idle();
        expect((await latestTask(dlqName)).ApproximateNumberOfMessagesMoved).toBe(2);
        current.driver.destroy();
        await first.stop({ keepDataDir: true });
        second = await startTestServer({ clock: ctx.clock(), dataDir: first.dataDir });
        current = { server: second, driver: ctx.driverFor(second) };
        await second.queues.moveTasks.runner.idle();
        ctx.clock().advance(1_000);
        await second.queues.moveTasks.runner.idle();
        ctx.clock().advance(1_000);
        await second.queues.moveTasks.runner.idle();
        ctx.clock().advance(1_000);
        await second.queues.moveTasks.runner.idle();
        expect(await latestTask(dlqName)).toMatchObject({ Status: "COMPLETED", ApproximateNumberOfMessagesMoved: 6 });
        expect(await queueDepth(`${second.url}/${accountId}/${nameOfUrl(srcUrl)}`)).toBe(6);
      } finally {
        current?.driver.destroy();
        current = undefined;
        await second?.stop({ keepDataDir: true });
        await first.stop();
      }
    });
  });

  describe("permissions", () => {
    it("AddPermission and RemovePermission maintain the Policy attribute", async () => {
      const name = unique("perm");
      const url = await createQueue(name);
      await call("AddPermission", { QueueUrl: url, Label: "send-from-partner", AWSAccountIds: ["111122223333"], Actions: ["SendMessage", "GetQueueUrl"] });
      const policy = JSON.parse((await call("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["Policy"] })).Attributes.Policy);
      expect(policy.Statement).toEqual([
        { Sid: "send-from-partner", Effect: "Allow", Principal: { AWS: "arn:aws:iam::111122223333:root" }, Action: ["SQS:SendMessage", "SQS:GetQueueUrl"], Resource: arnOf(name) },
      ]);
      await expectError(call("AddPermission", { QueueUrl: url, Label: "send-from-partner", AWSAccountIds: ["111122223333"], Actions: ["SendMessage"] }), invalidParameterValue);
      await call("RemovePermission", { QueueUrl: url, Label: "send-from-partner" });
      expect((await call("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["Policy"] })).Attributes?.Policy).toBeUndefined();
      await expectError(call("RemovePermission", { QueueUrl: url, Label: "send-from-partner" }), invalidParameterValue);
    });

    it("enforces SQS's policy limits: seven actions per statement, 8,192 bytes", async () => {
      const url = await createQueue(unique("perm"));
      const eight = ["SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility", "GetQueueAttributes", "GetQueueUrl", "ListDeadLetterSourceQueues", "PurgeQueue"];
      await expectError(call("AddPermission", { QueueUrl: url, Label: "eight", AWSAccountIds: ["111122223333"], Actions: eight }), invalidParameterValue);
      await call("AddPermission", { QueueUrl: url, Label: "seven", AWSAccountIds: ["111122223333"], Actions: eight.slice(0, 7) });
      const big = JSON.stringify({ Version: "2012-10-17", Statement: [{ Sid: "x".repeat(8_192), Effect: "Allow", Principal: "*", Action: "SQS:SendMessage" }] });
      const tooBig = call("SetQueueAttributes", { QueueUrl: url, Attributes: { Policy: big } });
      await expectError(tooBig, { shape: "InvalidAttributeValue", code: "InvalidAttributeValue" });
      await expect(tooBig).rejects.toThrow(/a queue policy is at most 8192 bytes/);
      const policy = JSON.parse((await call("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["Policy"] })).Attributes.Policy);
      expect(policy.Statement.map((s: { Sid: string }) => s.Sid)).toEqual(["seven"]);
    });
  });
}
