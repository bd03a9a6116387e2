/** Batch actions: call-level errors fail the call; per-entry errors land in Failed. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { md5Hex } from "../../src/core/digests.js";
import { type SqsHarness, openHarness, xmlText, xmlTexts } from "./sqs-harness.js";

interface BatchResult {
  Successful: Array<{ Id: string; MessageId?: string; MD5OfMessageBody?: string }>;
  Failed: Array<{ Id: string; SenderFault: boolean; Code: string; Message: string }>;
}

let h: SqsHarness;
let url: string;
beforeEach(async () => {
  h = await openHarness();
  url = await h.createQueue("batchq");
});
afterEach(async () => {
  expect(h.unexpected).toEqual([]);
  await h.close();
});

const entries = (n: number): Array<{ Id: string; MessageBody: string }> => Array.from({ length: n }, (_, i) => ({ Id: `m${i}`, MessageBody: `body ${i}` }));

describe("call-level batch errors", () => {
  const cases: Array<[string, unknown[], string]> = [
    ["no entries", [], "AWS.SimpleQueueService.EmptyBatchRequest"],
    ["11 entries", entries(11), "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"],
    ["repeated ids", [{ Id: "a", MessageBody: "1" }, { Id: "a", MessageBody: "2" }], "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"],
    ["an id with a dot", [{ Id: "a.b", MessageBody: "1" }], "AWS.SimpleQueueService.InvalidBatchEntryId"],
    ["an 81-character id", [{ Id: "x".repeat(81), MessageBody: "1" }], "AWS.SimpleQueueService.InvalidBatchEntryId"],
    ["a missing id", [{ MessageBody: "1" }], "AWS.SimpleQueueService.InvalidBatchEntryId"],
  ];
  for (const [what, list, code] of cases) {
    it(`SendMessageBatch with ${what} is ${code}`, async () => {
      const res = await h.json("SendMessageBatch", { QueueUrl: url, Entries: list });
      expect(res.statusCode).toBe(400);
      expect(res.headers["x-amzn-query-error"]).toBe(`${code};Sender`);
    });
  }

  it("a batch over 1 MiB in total is BatchRequestTooLong", async () => {
    const big = "x".repeat(300 * 1024);
    const res = await h.json("SendMessageBatch", { QueueUrl: url, Entries: [0, 1, 2, 3].map((i) => ({ Id: `b${i}`, MessageBody: big })) });
    expect(res.statusCode).toBe(400);
    expect(res.headers["x-amzn-query-error"]).toBe("AWS.SimpleQueueService.BatchRequestTooLong;Sender");
    expect((await h.json("ReceiveMessage", { QueueUrl: url })).json()).toEqual({});
  });

  it("the same checks apply to delete and visibility batches, in query too", async () => {
    const empty = await h.query({ Action: "DeleteMessageBatch", QueueUrl: url });
    expect(xmlText(empty.body, "Code")).toBe("AWS.SimpleQueueService.EmptyBatchRequest");
    const repeated = await h.query({
      Action: "ChangeMessageVisibilityBatch",
      QueueUrl: url,
      "ChangeMessageVisibilityBatchRequestEntry.1.Id": "a",
      "ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle": "r",
      "ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout": "1",
      "ChangeMessageVisibilityBatchRequestEntry.2.Id": "a",
      "ChangeMessageVisibilityBatchRequestEntry.2.ReceiptHandle": "r",
      "ChangeMessageVisibilityBatchRequestEntry.2.VisibilityTimeout": "1",
    });
    expect(xmlText(repeated.body, "Code")).toBe("AWS.SimpleQueueService.BatchEntryIdsNotDistinct");
  });

  it("a missing queue is QueueDoesNotExist for the whole call", async () => {
    const res = await h.json("SendMessageBatch", { QueueUrl: url.replace("batchq", "nope"), Entries: entries(2) });
    expect(res.headers["x-amzn-query-error"]).toBe("AWS.SimpleQueueService.NonExistentQueue;Sender");
  });
});

describe("per-entry outcomes", () => {
  it("sends the good entries and reports the bad ones, in request order", async () => {
    const res = await h.json("SendMessageBatch", {
      QueueUrl: url,
      Entries: [
        { Id: "ok1", MessageBody: "one" },
        { Id: "nobody" },
        { Id: "badchar", MessageBody: "a\u0001b" },
        { Id: "badprio", MessageBody: "p", MessageAttributes: { "Sluice.Priority": { DataType: "Number", StringValue: "12" } } },
        { Id: "baddelay", MessageBody: "d", DelaySeconds: 901 },
        { Id: "ok2", MessageBody: "two" },
      ],
    });
    expect(res.statusCode).toBe(200);
    const result = res.json() as BatchResult;
    expect(result.Successful.map((e) => e.Id)).toEqual(["ok1", "ok2"]);
    expect(result.Successful[0]!.MD5OfMessageBody).toBe(md5Hex("one"));
    expect(result.Failed).toEqual([
      { Id: "nobody", SenderFault: true, Code: "MissingParameter", Message: "The request must contain the parameter MessageBody." },
      expect.objectContaining({ Id: "badchar", SenderFault: true, Code: "InvalidMessageContents" }),
      expect.objectContaining({ Id: "badprio", SenderFault: true, Code: "InvalidParameterValue" }),
      expect.objectContaining({ Id: "baddelay", SenderFault: true, Code: "InvalidParameterValue" }),
    ]);
    const received = (await h.json("ReceiveMessage", { QueueUrl: url, MaxNumberOfMessages: 10 })).json() as { Messages: Array<{ Body: string }> };
    expect(received.Messages.map((m) => m.Body).sort()).toEqual(["one", "two"]);
  });

  it("sends a batch of ten through query and reports it in XML", async () => {
    const params: Record<string, string> = { Action: "SendMessageBatch", QueueUrl: url };
    entries(10).forEach((e, i) => {
      params[`SendMessageBatchRequestEntry.${i + 1}.Id`] = e.Id;
      params[`SendMessageBatchRequestEntry.${i + 1}.MessageBody`] = e.MessageBody;
    });
    const res = await h.query(params);
    expect(res.statusCode).toBe(200);
    const successful = xmlTexts(res.body, "SendMessageBatchResultEntry");
    expect(successful.map((e) => xmlText(e, "Id"))).toEqual(entries(10).map((e) => e.Id));
    expect(successful.map((e) => xmlText(e, "MD5OfMessageBody"))).toEqual(entries(10).map((e) => md5Hex(e.MessageBody)));
    expect(res.body).not.toContain("BatchResultErrorEntry");
  });

  it("deletes a batch, reporting bad handles per entry", async () => {
    await h.json("SendMessageBatch", { QueueUrl: url, Entries: entries(2) });
    const received = (await h.json("ReceiveMessage", { QueueUrl: url, MaxNumberOfMessages: 10 })).json() as { Messages: Array<{ ReceiptHandle: string }> };
    const res = await h.query({
      Action: "DeleteMessageBatch",
      QueueUrl: url,
      "DeleteMessageBatchRequestEntry.1.Id": "a",
      "DeleteMessageBatchRequestEntry.1.ReceiptHandle": received.Messages[0]!.ReceiptHandle,
      "DeleteMessageBatchRequestEntry.2.Id": "b",
      "DeleteMessageBatchRequestEntry.2.ReceiptHandle": "garbage",
      "DeleteMessageBatchRequestEntry.3.Id": "c",
      "DeleteMessageBatchRequestEntry.3.ReceiptHandle": received.Messages[1]!.ReceiptHandle,
    });
    expect(res.statusCode).toBe(200);
    expect(xmlTexts(res.body, "DeleteMessageBatchResultEntry").map((e) => xmlText(e, "Id"))).toEqual(["a", "c"]);
    const failed = xmlTexts(res.body, "BatchResultErrorEntry");
    expect(failed).toHaveLength(1);
    expect(xmlText(failed[0]!, "Id")).toBe("b");
    expect(xmlText(failed[0]!, "SenderFault")).toBe("true");
    expect(xmlText(failed[0]!, "Code")).toBe("ReceiptHandleIsInvalid");
  });

  it("changes visibility in a batch, reporting per-entry failures", async () => {
    await h.json("SendMessage", { QueueUrl: url, MessageBody: "x" });
    const received = (await h.json("ReceiveMessage", { QueueUrl: url, VisibilityTimeout: 600 })).json() as { Messages: Array<{ ReceiptHandle: string }> };
    const handle = received.Messages[0]!.ReceiptHandle;
    const res = await h.json("ChangeMessageVisibilityBatch", {
      QueueUrl: url,
      Entries: [
        { Id: "ok", ReceiptHandle: handle, VisibilityTimeout: 0 },
        { Id: "bad", ReceiptHandle: "garbage", VisibilityTimeout: 0 },
        { Id: "range", ReceiptHandle: handle, VisibilityTimeout: 50_000 },
        { Id: "missing", ReceiptHandle: handle },
      ],
    });
    const result = res.json() as BatchResult;
    expect(result.Successful).toEqual([{ Id: "ok" }]);
    expect(result.Failed.map((f) => [f.Id, f.Code])).toEqual([
      ["bad", "ReceiptHandleIsInvalid"],
      ["range", "InvalidParameterValue"],
      ["missing", "MissingParameter"],
    ]);
    const again = (await h.json("ReceiveMessage", { QueueUrl: url })).json() as { Messages: unknown[] };
    expect(again.Messages).toHaveLength(1);
  });
});
