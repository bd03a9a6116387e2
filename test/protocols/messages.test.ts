/** Message actions through both protocols: send, receive (attributes, digests, long polls), delete, visibility. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { attributesMd5, md5Hex } from "../../src/core/digests.js";
import { type SqsHarness, openHarness, settle, unescapeXml, xmlText, xmlTexts } from "./sqs-harness.js";

interface JsonMessage {
  MessageId: string;
  ReceiptHandle: string;
  MD5OfBody: string;
  Body: string;
  Attributes?: Record<string, string>;
  MD5OfMessageAttributes?: string;
  MessageAttributes?: Record<string, { DataType: string; StringValue?: string; BinaryValue?: string }>;
}

let h: SqsHarness;
let url: string;
beforeEach(async () => {
  h = await openHarness();
  url = await h.createQueue("work");
});
afterEach(async () => {
  expect(h.unexpected).toEqual([]);
  await h.close();
});

async function receiveJson(body: Record<string, unknown> = {}): Promise<JsonMessage[]> {
  const res = await h.json("ReceiveMessage", { QueueUrl: url, MaxNumberOfMessages: 10, ...body });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { Messages?: JsonMessage[] }).Messages ?? [];
}

const attributes = {
  color: { DataType: "String", StringValue: "blue" },
  count: { DataType: "Number", StringValue: "3" },
  blob: { DataType: "Binary", BinaryValue: Buffer.from([0, 1, 2, 255]).toString("base64") },
  "trace.id": { DataType: "String.custom", StringValue: "t-1" },
};
const coreAttributes = {
  color: { dataType: "String", stringValue: "blue" },
  count: { dataType: "Number", stringValue: "3" },
  blob: { dataType: "Binary", binaryValue: Buffer.from([0, 1, 2, 255]) },
  "trace.id": { dataType: "String.custom", stringValue: "t-1" },
};

describe("send and receive", () => {
  it("round-trips a body through JSON with its digests", async () => {
    const sent = await h.json("SendMessage", { QueueUrl: url, MessageBody: "hello", MessageAttributes: attributes });
    expect(sent.statusCode).toBe(200);
    const result = sent.json() as { MessageId: string; MD5OfMessageBody: string; MD5OfMessageAttributes: string };
    expect(result.MD5OfMessageBody).toBe(md5Hex("hello"));
    expect(result.MD5OfMessageAttributes).toBe(attributesMd5(coreAttributes));
    const [m] = await receiveJson({ MessageAttributeNames: ["All"] });
    expect(m).toMatchObject({ MessageId: result.MessageId, Body: "hello", MD5OfBody: md5Hex("hello"), MD5OfMessageAttributes: result.MD5OfMessageAttributes });
    expect(m!.MessageAttributes).toEqual(attributes);
  });

  it("keeps CR, markup and non-ASCII intact through query/XML", async () => {
    const body = "line1\r\nline2\r<tag a=\"1\">&amp;</tag> ✓ 😀\t";
    const sent = await h.query({ Action: "SendMessage", QueueUrl: url, MessageBody: body });
    expect(xmlText(sent.body, "MD5OfMessageBody")).toBe(md5Hex(body));
    const res = await h.query({ Action: "ReceiveMessage", QueueUrl: url });
    expect(res.body).toContain("&#xD;");
    expect(xmlText(res.body, "Body")).toBe(body);
    expect(xmlText(res.body, "MD5OfBody")).toBe(md5Hex(body));
  });

  it("sends and receives message attributes through query/XML, binary as base64", async () => {
    const sent = await h.query({
      Action: "SendMessage",
      QueueUrl: url,
      MessageBody: "x",
      "MessageAttribute.1.Name": "color",
      "MessageAttribute.1.Value.DataType": "String",
      "MessageAttribute.1.Value.StringValue": "blue",
      "MessageAttribute.2.Name": "blob",
      "MessageAttribute.2.Value.DataType": "Binary",
      "MessageAttribute.2.Value.BinaryValue": Buffer.from([0, 1, 2, 255]).toString("base64"),
    });
    const expectedMd5 = attributesMd5({ color: coreAttributes.color, blob: coreAttributes.blob });
    expect(xmlText(sent.body, "MD5OfMessageAttributes")).toBe(expectedMd5);
    const res = await h.query({ Action: "ReceiveMessage", QueueUrl: url, "MessageAttributeName.1": "All" });
    expect(xmlText(res.body, "MD5OfMessageAttributes")).toBe(expectedMd5);
    expect(res.body).toContain("<MessageAttribute><Name>color</Name><Value><StringValue>blue</StringValue><DataType>String</DataType></Value></MessageAttribute>");
    expect(res.body).toContain("<MessageAttribute><Name>blob</Name><Value><BinaryValue>AAEC/w==</BinaryValue><DataType>Binary</DataType></Value></MessageAttribute>");
  });

  it("returns only the attributes asked for, with a digest over exactly those", async () => {
    await h.json("SendMessage", { QueueUrl: url, MessageBody: "x", MessageAttributes: attributes });
    const [m] = await receiveJson({ MessageAttributeNames: ["color", "trace.*"], VisibilityTimeout: 0 });
    expect(Object.keys(m!.MessageAttributes!).sort()).toEqual(["color", "trace.id"]);
    expect(m!.MD5OfMessageAttributes).toBe(attributesMd5({ color: coreAttributes.color, "trace.id": coreAttributes["trace.id"] }));
    const [all] = await receiveJson({ MessageAttributeNames: [".*"], VisibilityTimeout: 0 });
    expect(Object.keys(all!.MessageAttributes!)).toHaveLength(4);
    const [none] = await receiveJson({});
    expect(none!.MessageAttributes).toBeUndefined();
    expect(none!.MD5OfMessageAttributes).toBeUndefined();
  });

  it("returns system attributes as strings, by the new and the deprecated parameter", async () => {
    const sent = await h.json("SendMessage", {
      QueueUrl: url,
      MessageBody: "x",
      MessageSystemAttributes: { AWSTraceHeader: { DataType: "String", StringValue: "Root=1-abc" } },
    });
    expect((sent.json() as { MD5OfMessageSystemAttributes: string }).MD5OfMessageSystemAttributes).toBe(
      attributesMd5({ AWSTraceHeader: { dataType: "String", stringValue: "Root=1-abc" } }),
    );
    const sentAt = String(h.clock.nowMs());
    h.clock.advance(1_000);
    const [m] = await receiveJson({ MessageSystemAttributeNames: ["All"], VisibilityTimeout: 0 });
    expect(m!.Attributes).toEqual({
      SenderId: "000000000000",
      SentTimestamp: sentAt,
      ApproximateReceiveCount: "1",
      ApproximateFirstReceiveTimestamp: String(h.clock.nowMs()),
      AWSTraceHeader: "Root=1-abc",
    });
    const [again] = await receiveJson({ AttributeNames: ["ApproximateReceiveCount"] });
    expect(again!.Attributes).toEqual({ ApproximateReceiveCount: "2" });
    const res = await h.query({ Action: "ReceiveMessage", QueueUrl: url, "AttributeName.1": "SentTimestamp", VisibilityTimeout: "0" });
    expect(res.statusCode).toBe(200);
  });

  it("rejects system attributes other than AWSTraceHeader", async () => {
    const res = await h.json("SendMessage", { QueueUrl: url, MessageBody: "x", MessageSystemAttributes: { SenderId: { DataType: "String", StringValue: "me" } } });
    expect(res.headers["x-amzn-query-error"]).toBe("InvalidParameterValue;Sender");
  });

  it("reports an oversized message as InvalidParameterValue, and invalid characters as InvalidMessageContents", async () => {
    const big = await h.json("SendMessage", { QueueUrl: url, MessageBody: "x".repeat(1_048_577) });
    expect(big.statusCode).toBe(400);
    expect(big.headers["x-amzn-query-error"]).toBe("InvalidParameterValue;Sender");
    const bad = await h.json("SendMessage", { QueueUrl: url, MessageBody: "a\u0000b" });
    expect(bad.headers["x-amzn-query-error"]).toBe("InvalidMessageContents;Sender");
    const missing = await h.json("SendMessage", { QueueUrl: url });
    expect(missing.headers["x-amzn-query-error"]).toBe("MissingParameter;Sender");
  });

  it("honours DelaySeconds", async () => {
    await h.json("SendMessage", { QueueUrl: url, MessageBody: "later", DelaySeconds: 5 });
    expect(await receiveJson()).toEqual([]);
    h.clock.advance(5_000);
    expect((await receiveJson()).map((m) => m.Body)).toEqual(["later"]);
  });
});

describe("Sluice.Priority", () => {
  it("receives higher priorities first and keeps the attribute (so digests match)", async () => {
    for (const [body, priority] of [["low", "1"], ["high", "9"], ["none", undefined]] as const) {
      const MessageAttributes = priority ? { "Sluice.Priority": { DataType: "Number", StringValue: priority } } : undefined;
      const res = await h.json("SendMessage", { QueueUrl: url, MessageBody: body, MessageAttributes });
      expect(res.statusCode).toBe(200);
    }
    const messages = await receiveJson({ MessageAttributeNames: ["All"] });
    expect(messages.map((m) => m.Body)).toEqual(["high", "low", "none"]);
    expect(messages[0]!.MessageAttributes).toEqual({ "Sluice.Priority": { DataType: "Number", StringValue: "9" } });
  });

  it("rejects values outside 0–9 or of the wrong type", async () => {
    for (const value of [{ DataType: "Number", StringValue: "10" }, { DataType: "Number", StringValue: "1.5" }, { DataType: "String", StringValue: "5" }]) {
      const res = await h.json("SendMessage", { QueueUrl: url, MessageBody: "x", MessageAttributes: { "Sluice.Priority": value } });
      expect(res.headers["x-amzn-query-error"], JSON.stringify(value)).toBe("InvalidParameterValue;Sender");
    }
  });
});

describe("delete and visibility", () => {
  it("deletes by receipt handle; a bad handle is ReceiptHandleIsInvalid (404)", async () => {
    await h.json("SendMessage", { QueueUrl: url, MessageBody: "x" });
    const [m] = await receiveJson();
    expect((await h.query({ Action: "DeleteMessage", QueueUrl: url, ReceiptHandle: m!.ReceiptHandle })).statusCode).toBe(200);
    h.clock.advance(60_000);
    expect(await receiveJson()).toEqual([]);
    const bad = await h.json("DeleteMessage", { QueueUrl: url, ReceiptHandle: "not-a-handle" });
    expect(bad.statusCode).toBe(404);
    expect(bad.headers["x-amzn-query-error"]).toBe("ReceiptHandleIsInvalid;Sender");
  });

  it("gives a new receipt handle on every receive", async () => {
    await h.json("SendMessage", { QueueUrl: url, MessageBody: "x" });
    const [first] = await receiveJson({ VisibilityTimeout: 0 });
    const [second] = await receiveJson({ VisibilityTimeout: 0 });
    expect(first!.MessageId).toBe(second!.MessageId);
    expect(first!.ReceiptHandle).not.toBe(second!.ReceiptHandle);
  });

  it("changes visibility: 0 makes a message visible again", async () => {
    await h.json("SendMessage", { QueueUrl: url, MessageBody: "x" });
    const [m] = await receiveJson({ VisibilityTimeout: 600 });
    expect(await receiveJson()).toEqual([]);
    const res = await h.query({ Action: "ChangeMessageVisibility", QueueUrl: url, ReceiptHandle: m!.ReceiptHandle, VisibilityTimeout: "0" });
    expect(res.statusCode).toBe(200);
    expect((await receiveJson()).map((x) => x.Body)).toEqual(["x"]);
    const missing = await h.json("ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: m!.ReceiptHandle });
    expect(missing.headers["x-amzn-query-error"]).toBe("MissingParameter;Sender");
  });

  it("validates receive parameters", async () => {
    for (const body of [{ MaxNumberOfMessages: 11 }, { MaxNumberOfMessages: 0 }, { WaitTimeSeconds: 21 }, { VisibilityTimeout: 43_201 }, { MaxNumberOfMessages: "ten" }]) {
      const res = await h.json("ReceiveMessage", { QueueUrl: url, ...body });
      expect(res.headers["x-amzn-query-error"], JSON.stringify(body)).toBe("InvalidParameterValue;Sender");
    }
  });
});

describe("long polling", () => {
  it("holds a receive until a send arrives", async () => {
    const pending = h.json("ReceiveMessage", { QueueUrl: url, WaitTimeSeconds: 20 });
    await settle(() => h.queues.waiters.waiterCount() === 1, "the poll to wait");
    await h.json("SendMessage", { QueueUrl: url, MessageBody: "wake" });
    const res = await pending;
    expect(((res.json() as { Messages: JsonMessage[] }).Messages ?? []).map((m) => m.Body)).toEqual(["wake"]);
  });

  it("returns empty when the wait passes (ManualClock)", async () => {
    const pending = h.query({ Action: "ReceiveMessage", QueueUrl: url, WaitTimeSeconds: "5" });
    await settle(() => h.queues.waiters.waiterCount() === 1, "the poll to wait");
    h.clock.advance(5_000);
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain("<ReceiveMessageResult></ReceiveMessageResult>");
  });

  it("a poll whose dead-letter queue is deleted while it waits delivers a message due to move, as SQS keeps it in the source (standard and FIFO)", async () => {
    for (const fifo of [false, true]) {
      const suffix = fifo ? ".fifo" : "";
      const type: Record<string, string> = fifo ? { FifoQueue: "true" } : {};
      const dlq = await h.createQueue(`dlq${suffix}`, type);
      const redrive = JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:dlq${suffix}`, maxReceiveCount: 1 });
      const src = await h.createQueue(`src${suffix}`, { ...type, VisibilityTimeout: "5", RedrivePolicy: redrive });
      await h.json("SendMessage", { QueueUrl: src, MessageBody: "poison", ...(fifo ? { MessageGroupId: "g", MessageDeduplicationId: "d" } : {}) });
      expect(((await h.json("ReceiveMessage", { QueueUrl: src })).json() as { Messages: JsonMessage[] }).Messages).toHaveLength(1);
      // The poll resolves its dead-letter target as it starts and keeps it for its whole wait.
      let answered = false;
      const polling = h.json("ReceiveMessage", { QueueUrl: src, WaitTimeSeconds: 20, MessageSystemAttributeNames: ["ApproximateReceiveCount"] }).finally(() => (answered = true));
      await settle(() => h.queues.waiters.waiterCount() === 1, "the poll to wait");
      expect((await h.json("DeleteQueue", { QueueUrl: dlq })).statusCode).toBe(200);
      h.clock.advance(5_000); // the first receive's visibility ends: the message is due to move
      await settle(() => answered || h.queues.waiters.waiterCount() === 1, "the poll to answer or wait again");
      expect(answered, `${suffix || "standard"}: answered when the message became visible`).toBe(true);
      const res = await polling;
      expect(res.statusCode).toBe(200);
      const messages = (res.json() as { Messages?: JsonMessage[] }).Messages ?? [];
      expect(messages.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount])).toEqual([["poison", "2"]]);
    }
  });

  it("returns empty at once when the server shuts down", async () => {
    const pending = h.json("ReceiveMessage", { QueueUrl: url, WaitTimeSeconds: 20 });
    await settle(() => h.queues.waiters.waiterCount() === 1, "the poll to wait");
    h.shutdown.abort();
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    expect(res.headers.connection).toBe("close");
  });
});

describe("XML shape of a received message", () => {
  it("lists Attribute entries and MessageAttribute entries inside Message", async () => {
    await h.json("SendMessage", { QueueUrl: url, MessageBody: "x", MessageAttributes: { color: attributes.color } });
    const res = await h.query({ Action: "ReceiveMessage", QueueUrl: url, "AttributeName.1": "SenderId", "MessageAttributeName.1": "color" });
    const message = xmlTexts(res.body, "Message")[0]!;
    expect(message).toMatch(/^<MessageId>[0-9a-f-]{36}<\/MessageId><ReceiptHandle>[^<]+<\/ReceiptHandle><MD5OfBody>[0-9a-f]{32}<\/MD5OfBody><Body>x<\/Body>/);
    expect(message).toContain("<Attribute><Name>SenderId</Name><Value>000000000000</Value></Attribute>");
    expect(unescapeXml(xmlText(message, "MD5OfMessageAttributes")!)).toBe(attributesMd5({ color: coreAttributes.color }));
  });
});
