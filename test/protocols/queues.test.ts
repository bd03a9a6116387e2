/** Queue actions through both protocols: lifecycle, URLs, listing, attributes, tags. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type SqsHarness, accountId, host, openHarness, queueUrlPrefix, settle, xmlText, xmlTexts } from "./sqs-harness.js";

let h: SqsHarness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  expect(h.unexpected).toEqual([]);
  await h.close();
});

describe("CreateQueue / GetQueueUrl / DeleteQueue", () => {
  it("builds the queue URL from the Host header", async () => {
    const res = await h.json("CreateQueue", { QueueName: "jobs" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ QueueUrl: `${queueUrlPrefix}jobs` });
    const other = await h.app.inject({
      method: "POST",
      url: "/",
      headers: { host: "10.0.0.5:8080", "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.GetQueueUrl" },
      payload: JSON.stringify({ QueueName: "jobs" }),
    });
    expect(other.json()).toEqual({ QueueUrl: `http://10.0.0.5:8080/${accountId}/jobs` });
  });

  it("returns the same URL for the same name and attributes, QueueAlreadyExists for different ones", async () => {
    const first = await h.createQueue("same", { VisibilityTimeout: "40" });
    expect(await h.createQueue("same", { VisibilityTimeout: "40" })).toBe(first);
    expect(await h.createQueue("same")).toBe(first);
    const clash = await h.json("CreateQueue", { QueueName: "same", Attributes: { VisibilityTimeout: "41" } });
    expect(clash.statusCode).toBe(400);
    expect(clash.headers["x-amzn-query-error"]).toBe("QueueAlreadyExists;Sender");
  });

  it("speaks query too, with attributes and tags", async () => {
    const res = await h.query({ Action: "CreateQueue", QueueName: "q1", "Attribute.1.Name": "DelaySeconds", "Attribute.1.Value": "5", "Tag.1.Key": "team", "Tag.1.Value": "ml" });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain("<CreateQueueResponse");
    expect(xmlText(res.body, "QueueUrl")).toBe(`${queueUrlPrefix}q1`);
    const attrs = await h.json("GetQueueAttributes", { QueueUrl: `${queueUrlPrefix}q1`, AttributeNames: ["DelaySeconds"] });
    expect(attrs.json()).toEqual({ Attributes: { DelaySeconds: "5" } });
    const tags = await h.query({ Action: "ListQueueTags", QueueUrl: `${queueUrlPrefix}q1` });
    expect(tags.body).toContain("<Tag><Key>team</Key><Value>ml</Value></Tag>");
  });

  it("rejects invalid names", async () => {
    for (const name of ["has space", "x".repeat(81), "", "no.fifo"]) {
      const res = await h.json("CreateQueue", { QueueName: name });
      expect(res.statusCode, name).toBe(400);
    }
  });

  it("GetQueueUrl of a missing queue is QueueDoesNotExist; of another account's queue, AccessDenied", async () => {
    await h.createQueue("mine");
    expect((await h.json("GetQueueUrl", { QueueName: "nope" })).headers["x-amzn-query-error"]).toBe("AWS.SimpleQueueService.NonExistentQueue;Sender");
    const other = await h.json("GetQueueUrl", { QueueName: "mine", QueueOwnerAWSAccountId: "123456789012" });
    expect(other.statusCode).toBe(403);
    expect(other.headers["x-amzn-query-error"]).toBe("AccessDenied;Sender");
    expect((await h.json("GetQueueUrl", { QueueName: "mine", QueueOwnerAWSAccountId: accountId })).statusCode).toBe(200);
  });

  it("ignores the host of a QueueUrl but checks its account", async () => {
    await h.createQueue("hosted");
    const elsewhere = await h.json("GetQueueAttributes", { QueueUrl: `http://another-host:1/${accountId}/hosted`, AttributeNames: ["QueueArn"] });
    expect(elsewhere.json()).toEqual({ Attributes: { QueueArn: `arn:aws:sqs:us-east-1:${accountId}:hosted` } });
    // Another account's queue (accounts: docs/security.md); a segment that is no account id names no queue.
    const wrongAccount = await h.json("GetQueueAttributes", { QueueUrl: `http://${host}/123456789012/hosted` });
    expect(wrongAccount.headers["x-amzn-query-error"]).toBe("AccessDenied;Sender");
    const notAnAccount = await h.json("GetQueueAttributes", { QueueUrl: `http://${host}/12345/hosted` });
    expect(notAnAccount.headers["x-amzn-query-error"]).toBe("AWS.SimpleQueueService.NonExistentQueue;Sender");
  });

  it("deletes a queue; afterwards it does not exist", async () => {
    const url = await h.createQueue("gone");
    const res = await h.query({ Action: "DeleteQueue", QueueUrl: url });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain("<DeleteQueueResponse");
    expect(res.body).not.toContain("DeleteQueueResult");
    expect((await h.json("GetQueueUrl", { QueueName: "gone" })).statusCode).toBe(400);
  });

  it("a send that read its queue before a DeleteQueue committed is QueueDoesNotExist and leaves no messages behind", async () => {
    const url = await h.createQueue("racing");
    const stale = await h.queues.getQueue("", "racing");
    // Each send has read the queue and is held just before its write while DeleteQueue commits.
    const sendMessages = h.queues.sendMessages.bind(h.queues);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = vi.spyOn(h.queues, "sendMessages").mockImplementation(async (queue, entries) => {
      await gate;
      return sendMessages(queue, entries);
    });
    const single = h.json("SendMessage", { QueueUrl: url, MessageBody: "orphan?" });
    const batch = h.query({ Action: "SendMessageBatch", QueueUrl: url, "SendMessageBatchRequestEntry.1.Id": "a", "SendMessageBatchRequestEntry.1.MessageBody": "orphan?" });
    await settle(() => held.mock.calls.length === 2, "both sends to read the queue");
    expect((await h.json("DeleteQueue", { QueueUrl: url })).statusCode).toBe(200);
    release();
    const [json, query] = [await single, await batch];
    expect([json.statusCode, json.headers["x-amzn-query-error"]]).toEqual([400, "AWS.SimpleQueueService.NonExistentQueue;Sender"]);
    expect([query.statusCode, xmlText(query.body, "Code")]).toEqual([400, "AWS.SimpleQueueService.NonExistentQueue"]);
    held.mockRestore();
    expect(await h.queues.queueStats(stale)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it("accepts query requests on the queue URL path without QueueUrl, by GET or POST", async () => {
    await h.createQueue("pathq");
    const byGet = await h.query({ Action: "GetQueueAttributes", "AttributeName.1": "QueueArn" }, { method: "GET", url: `/${accountId}/pathq` });
    expect(xmlText(byGet.body, "Value")).toBe(`arn:aws:sqs:us-east-1:${accountId}:pathq`);
    const byPost = await h.query({ Action: "SendMessage", MessageBody: "hi" }, { url: `/${accountId}/pathq` });
    expect(byPost.statusCode).toBe(200);
    expect(xmlText(byPost.body, "MD5OfMessageBody")).toBe("49f68a5c8493ec2c0bf489821c21fc3b");
  });
});

describe("ListQueues", () => {
  beforeEach(async () => {
    for (const name of ["a1", "a2", "a3", "b1"]) await h.createQueue(name);
  });

  it("lists all queues, or those with a prefix, without a NextToken", async () => {
    expect((await h.json("ListQueues", {})).json()).toEqual({ QueueUrls: ["a1", "a2", "a3", "b1"].map((n) => queueUrlPrefix + n) });
    const prefixed = await h.query({ Action: "ListQueues", QueueNamePrefix: "a" });
    expect(xmlTexts(prefixed.body, "QueueUrl")).toEqual(["a1", "a2", "a3"].map((n) => queueUrlPrefix + n));
    expect(prefixed.body).not.toContain("NextToken");
  });

  it("pages with MaxResults and NextToken", async () => {
    const page1 = (await h.json("ListQueues", { MaxResults: 2 })).json() as { QueueUrls: string[]; NextToken?: string };
    expect(page1.QueueUrls).toEqual([`${queueUrlPrefix}a1`, `${queueUrlPrefix}a2`]);
    expect(page1.NextToken).toBeTruthy();
    const page2 = (await h.json("ListQueues", { MaxResults: 2, NextToken: page1.NextToken })).json() as { QueueUrls: string[]; NextToken?: string };
    expect(page2.QueueUrls).toEqual([`${queueUrlPrefix}a3`, `${queueUrlPrefix}b1`]);
    expect(page2.NextToken).toBeUndefined();
  });

  it("returns no QueueUrls member when nothing matches", async () => {
    expect((await h.json("ListQueues", { QueueNamePrefix: "zzz" })).json()).toEqual({});
  });
});

describe("queue attributes", () => {
  it("returns every standard attribute for All, timestamps in seconds", async () => {
    const url = await h.createQueue("attrs");
    const res = await h.json("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["All"] });
    const attributes = (res.json() as { Attributes: Record<string, string> }).Attributes;
    expect(Object.keys(attributes).sort()).toEqual(
      [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesDelayed",
        "ApproximateNumberOfMessagesNotVisible",
        "CreatedTimestamp",
        "DelaySeconds",
        "LastModifiedTimestamp",
        "MaximumMessageSize",
        "MessageRetentionPeriod",
        "QueueArn",
        "ReceiveMessageWaitTimeSeconds",
        "SqsManagedSseEnabled",
        "VisibilityTimeout",
      ].sort(),
    );
    expect(attributes.CreatedTimestamp).toBe(String(Math.floor(h.clock.nowMs() / 1000)));
    expect(attributes).toMatchObject({ VisibilityTimeout: "30", MessageRetentionPeriod: "345600", MaximumMessageSize: "1048576", ApproximateNumberOfMessages: "0" });
  });

  it("returns nothing when no names are asked for", async () => {
    const url = await h.createQueue("none");
    expect((await h.json("GetQueueAttributes", { QueueUrl: url })).json()).toEqual({});
  });

  it("counts visible, in-flight and delayed messages", async () => {
    const url = await h.createQueue("counts");
    await h.json("SendMessageBatch", {
      QueueUrl: url,
      Entries: [
        { Id: "a", MessageBody: "a" },
        { Id: "b", MessageBody: "b" },
        { Id: "c", MessageBody: "c", DelaySeconds: 60 },
      ],
    });
    await h.json("ReceiveMessage", { QueueUrl: url });
    const res = await h.query({ Action: "GetQueueAttributes", QueueUrl: url, "AttributeName.1": "All" });
    const values = Object.fromEntries(xmlTexts(res.body, "Attribute").map((a) => [xmlText(a, "Name"), xmlText(a, "Value")]));
    expect(values).toMatchObject({ ApproximateNumberOfMessages: "1", ApproximateNumberOfMessagesNotVisible: "1", ApproximateNumberOfMessagesDelayed: "1" });
  });

  it("sets and reads back attributes, including JSON policies", async () => {
    await h.createQueue("dlq");
    const url = await h.createQueue("src");
    const redrive = JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:us-east-1:${accountId}:dlq`, maxReceiveCount: "3" });
    const policy = JSON.stringify({ Version: "2012-10-17", Statement: [] });
    const set = await h.json("SetQueueAttributes", { QueueUrl: url, Attributes: { VisibilityTimeout: "5", RedrivePolicy: redrive, Policy: policy, KmsMasterKeyId: "alias/aws/sqs" } });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toEqual({});
    const res = await h.json("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["VisibilityTimeout", "RedrivePolicy", "Policy", "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds"] });
    expect(res.json()).toEqual({
      Attributes: {
        VisibilityTimeout: "5",
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:us-east-1:${accountId}:dlq`, maxReceiveCount: 3 }),
        Policy: policy,
        KmsMasterKeyId: "alias/aws/sqs",
        KmsDataKeyReusePeriodSeconds: "300",
      },
    });
    await h.json("SetQueueAttributes", { QueueUrl: url, Attributes: { RedrivePolicy: "" } });
    expect((await h.json("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["RedrivePolicy"] })).json()).toEqual({});
  });

  it("rejects unknown names (InvalidAttributeName) and bad values (InvalidAttributeValue)", async () => {
    const url = await h.createQueue("strict");
    const unknown = await h.json("SetQueueAttributes", { QueueUrl: url, Attributes: { Colour: "blue" } });
    expect(unknown.headers["x-amzn-query-error"]).toBe("InvalidAttributeName;Sender");
    const readOnly = await h.json("SetQueueAttributes", { QueueUrl: url, Attributes: { QueueArn: "x" } });
    expect(readOnly.headers["x-amzn-query-error"]).toBe("InvalidAttributeName;Sender");
    const fifoOnly = await h.json("SetQueueAttributes", { QueueUrl: url, Attributes: { ContentBasedDeduplication: "true" } });
    expect(fifoOnly.headers["x-amzn-query-error"]).toBe("InvalidAttributeName;Sender");
    const getUnknown = await h.json("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["Colour"] });
    expect(getUnknown.headers["x-amzn-query-error"]).toBe("InvalidAttributeName;Sender");
    for (const [name, value] of [
      ["VisibilityTimeout", "abc"],
      ["VisibilityTimeout", "43201"],
      ["MessageRetentionPeriod", "59"],
      ["MaximumMessageSize", "1048577"],
      ["RedrivePolicy", "{not json"],
      ["RedriveAllowPolicy", JSON.stringify({ redrivePermission: "sometimes" })],
      ["SqsManagedSseEnabled", "maybe"],
    ] as const) {
      const res = await h.json("SetQueueAttributes", { QueueUrl: url, Attributes: { [name]: value } });
      expect(res.headers["x-amzn-query-error"], `${name}=${value}`).toBe("InvalidAttributeValue;Sender");
    }
  });

  it("creates FIFO queues with their attributes", async () => {
    const url = await h.createQueue("orders.fifo", { FifoQueue: "true", ContentBasedDeduplication: "true" });
    const res = await h.json("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["All"] });
    expect((res.json() as { Attributes: Record<string, string> }).Attributes).toMatchObject({
      FifoQueue: "true",
      ContentBasedDeduplication: "true",
      DeduplicationScope: "queue",
      FifoThroughputLimit: "perQueue",
    });
    const noFifoAttribute = await h.json("CreateQueue", { QueueName: "x.fifo" });
    expect(noFifoAttribute.statusCode).toBe(400);
  });

  it("exposes the Sluice.DefaultPriority extension only when named", async () => {
    const url = await h.createQueue("prio", { "Sluice.DefaultPriority": "4" });
    const all = (await h.json("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["All"] })).json() as { Attributes: Record<string, string> };
    expect(all.Attributes["Sluice.DefaultPriority"]).toBeUndefined();
    const named = await h.json("GetQueueAttributes", { QueueUrl: url, AttributeNames: ["Sluice.DefaultPriority"] });
    expect(named.json()).toEqual({ Attributes: { "Sluice.DefaultPriority": "4" } });
  });
});

describe("tags and purge", () => {
  it("tags, lists and untags", async () => {
    const url = await h.createQueue("tagged");
    await h.json("TagQueue", { QueueUrl: url, Tags: { a: "1", b: "2" } });
    await h.query({ Action: "UntagQueue", QueueUrl: url, "TagKey.1": "a" });
    expect((await h.json("ListQueueTags", { QueueUrl: url })).json()).toEqual({ Tags: { b: "2" } });
    await h.query({ Action: "TagQueue", QueueUrl: url, "Tag.1.Key": "c", "Tag.1.Value": "3" });
    expect((await h.json("ListQueueTags", { QueueUrl: url })).json()).toEqual({ Tags: { b: "2", c: "3" } });
  });

  it("purges, and a second purge within 60 s is PurgeQueueInProgress (403)", async () => {
    const url = await h.createQueue("purged");
    await h.json("SendMessage", { QueueUrl: url, MessageBody: "x" });
    expect((await h.json("PurgeQueue", { QueueUrl: url })).statusCode).toBe(200);
    const again = await h.json("PurgeQueue", { QueueUrl: url });
    expect(again.statusCode).toBe(403);
    expect(again.headers["x-amzn-query-error"]).toBe("AWS.SimpleQueueService.PurgeQueueInProgress;Sender");
    h.clock.advance(60_000);
    expect((await h.json("PurgeQueue", { QueueUrl: url })).statusCode).toBe(200);
    expect((await h.json("ReceiveMessage", { QueueUrl: url })).json()).toEqual({});
  });
});
