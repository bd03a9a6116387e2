/**
 * Queue-level SQS scenarios, run through each real SDK: CreateQueue, GetQueueUrl, ListQueues,
 * DeleteQueue, Get/SetQueueAttributes, PurgeQueue, tags, and their error paths.
 */
import { describe, expect, it } from "vitest";
import { expectSqsError, sqsErrors, withMessage } from "./drivers.js";
import { type Harness, accountId } from "./harness.js";

const nowSeconds = (h: Harness): string => String(Math.floor(h.clock.nowMs() / 1000));

export function queueScenarios(h: Harness): void {
  describe("CreateQueue", () => {
    it("creates a queue with attributes and tags; URL and ARN follow the contract", async () => {
      const name = h.uniqueName("create");
      const createdAt = nowSeconds(h);
      const url = await h.createQueue({ VisibilityTimeout: "45", DelaySeconds: "3", MessageRetentionPeriod: "600" }, { team: "ml", env: "test" }, name);
      const attrs = await h.attributes(url);
      expect(attrs).toMatchObject({
        QueueArn: `arn:aws:sqs:us-east-1:${accountId}:${name}`,
        VisibilityTimeout: "45",
        DelaySeconds: "3",
        MessageRetentionPeriod: "600",
        MaximumMessageSize: "1048576",
        ReceiveMessageWaitTimeSeconds: "0",
        ApproximateNumberOfMessages: "0",
        ApproximateNumberOfMessagesNotVisible: "0",
        ApproximateNumberOfMessagesDelayed: "0",
        CreatedTimestamp: createdAt,
        LastModifiedTimestamp: createdAt,
      });
      const tags = await h.driver.call("ListQueueTags", { QueueUrl: url });
      expect(tags.Tags).toEqual({ team: "ml", env: "test" });
    });

    it("defaults match SQS (visibility 30 s, retention 4 d, 1 MiB, no delay)", async () => {
      const url = await h.createQueue();
      expect(await h.attributes(url)).toMatchObject({
        VisibilityTimeout: "30",
        MessageRetentionPeriod: "345600",
        MaximumMessageSize: "1048576",
        DelaySeconds: "0",
        ReceiveMessageWaitTimeSeconds: "0",
      });
    });

    it("same name and same attributes returns the same URL; no attributes also returns it", async () => {
      const name = h.uniqueName("idem");
      const first = await h.createQueue({ VisibilityTimeout: "60" }, undefined, name);
      const again = await h.driver.call("CreateQueue", { QueueName: name, Attributes: { VisibilityTimeout: "60" } });
      expect(again.QueueUrl).toBe(first);
      const bare = await h.driver.call("CreateQueue", { QueueName: name });
      expect(bare.QueueUrl).toBe(first);
    });

    it("same name with different attributes fails with QueueNameExists (code QueueAlreadyExists) and changes nothing", async () => {
      const name = h.uniqueName("exists");
      const url = await h.createQueue({ VisibilityTimeout: "60" }, undefined, name);
      // SQS names the attribute (LocalStack's AWS-validated recording), not Sluice's field.
      const exists = withMessage(sqsErrors.QueueNameExists, "A queue already exists with the same name and a different value for attribute VisibilityTimeout");
      await expectSqsError(h.driver, "CreateQueue", { QueueName: name, Attributes: { VisibilityTimeout: "61" } }, exists);
      expect((await h.attributes(url, ["VisibilityTimeout"])).VisibilityTimeout).toBe("60");
    });

    it("rejects out-of-range attributes with InvalidAttributeValue and an invalid name with InvalidParameterValue", async () => {
      const name = h.uniqueName("badattr");
      await expectSqsError(h.driver, "CreateQueue", { QueueName: name, Attributes: { VisibilityTimeout: "50000" } }, sqsErrors.InvalidAttributeValue);
      await expectSqsError(h.driver, "GetQueueUrl", { QueueName: name }, sqsErrors.QueueDoesNotExist);
      await expectSqsError(h.driver, "CreateQueue", { QueueName: "has space" }, sqsErrors.InvalidParameterValue);
      await expectSqsError(h.driver, "CreateQueue", { QueueName: "x".repeat(81) }, sqsErrors.InvalidParameterValue);
    });
  });

  describe("GetQueueUrl / ListQueues / DeleteQueue", () => {
    it("GetQueueUrl returns the URL of an existing queue and QueueDoesNotExist for a missing one", async () => {
      const name = h.uniqueName("geturl");
      const url = await h.createQueue(undefined, undefined, name);
      expect((await h.driver.call("GetQueueUrl", { QueueName: name })).QueueUrl).toBe(url);
      await expectSqsError(h.driver, "GetQueueUrl", { QueueName: h.uniqueName("missing") }, sqsErrors.QueueDoesNotExist);
    });

    it("ListQueues filters by prefix and pages with MaxResults + NextToken", async () => {
      const prefix = h.uniqueName("list");
      const urls: string[] = [];
      for (const suffix of ["a", "b", "c", "d", "e"]) urls.push(await h.createQueue(undefined, undefined, `${prefix}-${suffix}`));
      await h.createQueue(undefined, undefined, h.uniqueName("other"));

      const all = await h.driver.call("ListQueues", { QueueNamePrefix: prefix });
      expect([...(all.QueueUrls ?? [])].sort()).toEqual([...urls].sort());

      const pages: string[][] = [];
      let token: string | undefined;
      do {
        const page = await h.driver.call("ListQueues", { QueueNamePrefix: prefix, MaxResults: 2, NextToken: token });
        pages.push(page.QueueUrls ?? []);
        token = page.NextToken;
        expect(pages.length).toBeLessThanOrEqual(5);
      } while (token);
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(pages.flat().sort()).toEqual([...urls].sort());

      const none = await h.driver.call("ListQueues", { QueueNamePrefix: h.uniqueName("nothing-here") });
      expect(none.QueueUrls ?? []).toEqual([]);

      await expectSqsError(h.driver, "ListQueues", { QueueNamePrefix: prefix, MaxResults: 1001 }, sqsErrors.InvalidParameterValue);

      const unfiltered = await h.driver.call("ListQueues", {});
      expect(unfiltered.QueueUrls).toEqual(expect.arrayContaining(urls));
    });

    it("DeleteQueue removes the queue; its name is QueueDeletedRecently for 60 s, then reusable", async () => {
      const name = h.uniqueName("delete");
      const url = await h.createQueue(undefined, undefined, name);
      await h.send(url, "doomed");
      await h.driver.call("DeleteQueue", { QueueUrl: url });
      await expectSqsError(h.driver, "GetQueueUrl", { QueueName: name }, sqsErrors.QueueDoesNotExist);
      await expectSqsError(h.driver, "SendMessage", { QueueUrl: url, MessageBody: "x" }, sqsErrors.QueueDoesNotExist);
      await expectSqsError(h.driver, "CreateQueue", { QueueName: name }, sqsErrors.QueueDeletedRecently);
      h.clock.advance(61_000);
      const recreated = await h.createQueue(undefined, undefined, name);
      expect(recreated).toBe(url);
      // The new queue does not inherit the old one's messages.
      expect(await h.counts(recreated)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
    });

    it("every queue action on a nonexistent queue fails with QueueDoesNotExist, worded as each protocol words it", async () => {
      const missing = `${h.server.url}/${accountId}/${h.uniqueName("ghost")}`;
      // SQS's JSON answers say "does not exist.", its query (XML) answers "… for this wsdl version.".
      const e = withMessage(sqsErrors.QueueDoesNotExist, { json: "The specified queue does not exist.", query: "The specified queue does not exist for this wsdl version." });
      await expectSqsError(h.driver, "GetQueueUrl", { QueueName: h.uniqueName("ghost") }, e);
      await expectSqsError(h.driver, "DeleteQueue", { QueueUrl: missing }, e);
      await expectSqsError(h.driver, "GetQueueAttributes", { QueueUrl: missing, AttributeNames: ["All"] }, e);
      await expectSqsError(h.driver, "SetQueueAttributes", { QueueUrl: missing, Attributes: { DelaySeconds: "1" } }, e);
      await expectSqsError(h.driver, "PurgeQueue", { QueueUrl: missing }, e);
      await expectSqsError(h.driver, "SendMessage", { QueueUrl: missing, MessageBody: "x" }, e);
      await expectSqsError(h.driver, "SendMessageBatch", { QueueUrl: missing, Entries: [{ Id: "a", MessageBody: "x" }] }, e);
      await expectSqsError(h.driver, "ReceiveMessage", { QueueUrl: missing }, e);
      await expectSqsError(h.driver, "DeleteMessage", { QueueUrl: missing, ReceiptHandle: "unknown" }, e);
      await expectSqsError(h.driver, "DeleteMessageBatch", { QueueUrl: missing, Entries: [{ Id: "a", ReceiptHandle: "unknown" }] }, e);
      await expectSqsError(h.driver, "ChangeMessageVisibility", { QueueUrl: missing, ReceiptHandle: "unknown", VisibilityTimeout: 0 }, e);
      await expectSqsError(h.driver, "ChangeMessageVisibilityBatch", { QueueUrl: missing, Entries: [{ Id: "a", ReceiptHandle: "unknown", VisibilityTimeout: 0 }] }, e);
      await expectSqsError(h.driver, "TagQueue", { QueueUrl: missing, Tags: { a: "b" } }, e);
      await expectSqsError(h.driver, "UntagQueue", { QueueUrl: missing, TagKeys: ["a"] }, e);
      await expectSqsError(h.driver, "ListQueueTags", { QueueUrl: missing }, e);
      await expectSqsError(h.driver, "ListDeadLetterSourceQueues", { QueueUrl: missing }, e);
      await expectSqsError(h.driver, "AddPermission", { QueueUrl: missing, Label: "l", AWSAccountIds: ["111122223333"], Actions: ["SendMessage"] }, e);
      await expectSqsError(h.driver, "RemovePermission", { QueueUrl: missing, Label: "l" }, e);
    });
  });

  describe("Get/SetQueueAttributes", () => {
    it("returns only the named attributes when names are given", async () => {
      const name = h.uniqueName("names");
      const url = await h.createQueue(undefined, undefined, name);
      const attrs = await h.attributes(url, ["VisibilityTimeout", "QueueArn"]);
      expect(attrs).toEqual({ VisibilityTimeout: "30", QueueArn: `arn:aws:sqs:us-east-1:${accountId}:${name}` });
    });

    it("rejects an unknown attribute name with InvalidAttributeName", async () => {
      const url = await h.createQueue();
      await expectSqsError(h.driver, "GetQueueAttributes", { QueueUrl: url, AttributeNames: ["NoSuchAttribute" as never] }, sqsErrors.InvalidAttributeName);
    });

    it("SetQueueAttributes updates values and LastModifiedTimestamp; out-of-range values fail and change nothing", async () => {
      const url = await h.createQueue();
      const created = await h.attributes(url, ["CreatedTimestamp"]);
      h.clock.advance(5_000);
      const modifiedAt = nowSeconds(h);
      await h.driver.call("SetQueueAttributes", {
        QueueUrl: url,
        Attributes: { VisibilityTimeout: "45", DelaySeconds: "2", MaximumMessageSize: "2048", MessageRetentionPeriod: "120", ReceiveMessageWaitTimeSeconds: "0" },
      });
      expect(await h.attributes(url)).toMatchObject({
        VisibilityTimeout: "45",
        DelaySeconds: "2",
        MaximumMessageSize: "2048",
        MessageRetentionPeriod: "120",
        CreatedTimestamp: created.CreatedTimestamp,
        LastModifiedTimestamp: modifiedAt,
      });
      await expectSqsError(h.driver, "SetQueueAttributes", { QueueUrl: url, Attributes: { VisibilityTimeout: "50000" } }, sqsErrors.InvalidAttributeValue);
      await expectSqsError(h.driver, "SetQueueAttributes", { QueueUrl: url, Attributes: { DelaySeconds: "901" } }, sqsErrors.InvalidAttributeValue);
      await expectSqsError(h.driver, "SetQueueAttributes", { QueueUrl: url, Attributes: { MessageRetentionPeriod: "59" } }, sqsErrors.InvalidAttributeValue);
      expect(await h.attributes(url, ["VisibilityTimeout", "DelaySeconds", "MessageRetentionPeriod"])).toEqual({
        VisibilityTimeout: "45",
        DelaySeconds: "2",
        MessageRetentionPeriod: "120",
      });
    });

    it("KMS and SQS-managed encryption exclude each other, as in SQS", async () => {
      const sse = ["KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled"];
      const url = await h.createQueue();
      expect(await h.attributes(url, sse)).toEqual({ SqsManagedSseEnabled: "true" });
      // Both at once: SQS's InvalidAttributeName ("one type of server-side encryption at one time"), nothing changes.
      await expectSqsError(h.driver, "SetQueueAttributes", { QueueUrl: url, Attributes: { KmsMasterKeyId: "alias/aws/sqs", SqsManagedSseEnabled: "true" } }, sqsErrors.InvalidAttributeName);
      expect(await h.attributes(url, sse)).toEqual({ SqsManagedSseEnabled: "true" });
      // A KMS key turns SQS-managed encryption off…
      await h.driver.call("SetQueueAttributes", { QueueUrl: url, Attributes: { KmsMasterKeyId: "alias/aws/sqs", KmsDataKeyReusePeriodSeconds: "600" } });
      expect(await h.attributes(url, sse)).toEqual({ KmsMasterKeyId: "alias/aws/sqs", KmsDataKeyReusePeriodSeconds: "600", SqsManagedSseEnabled: "false" });
      // …and SQS-managed encryption turned back on drops the key.
      await h.driver.call("SetQueueAttributes", { QueueUrl: url, Attributes: { SqsManagedSseEnabled: "true" } });
      expect(await h.attributes(url, sse)).toEqual({ SqsManagedSseEnabled: "true" });

      const kms = await h.createQueue({ KmsMasterKeyId: "alias/aws/sqs" });
      expect(await h.attributes(kms, sse)).toEqual({ KmsMasterKeyId: "alias/aws/sqs", KmsDataKeyReusePeriodSeconds: "300", SqsManagedSseEnabled: "false" });
      await expectSqsError(h.driver, "CreateQueue", { QueueName: h.uniqueName("both"), Attributes: { KmsMasterKeyId: "k", SqsManagedSseEnabled: "true" } }, sqsErrors.InvalidAttributeName);
    });

    it("a queue's MaximumMessageSize bounds its messages (InvalidParameterValue above it)", async () => {
      const url = await h.createQueue({ MaximumMessageSize: "1024" });
      await h.send(url, "x".repeat(1024));
      await expectSqsError(h.driver, "SendMessage", { QueueUrl: url, MessageBody: "x".repeat(1025) }, sqsErrors.InvalidParameterValue);
      expect((await h.counts(url)).visible).toBe(1);
    });
  });

  describe("PurgeQueue", () => {
    it("deletes visible and in-flight messages; a second purge within 60 s is PurgeQueueInProgress", async () => {
      const url = await h.createQueue();
      for (const body of ["a", "b", "c"]) await h.send(url, body);
      await h.send(url, "later", { DelaySeconds: 60 });
      expect(await h.receive(url)).toHaveLength(1);
      expect(await h.counts(url)).toEqual({ visible: 2, notVisible: 1, delayed: 1 });
      await h.driver.call("PurgeQueue", { QueueUrl: url });
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
      expect(await h.receive(url, { MaxNumberOfMessages: 10 })).toEqual([]);
      await expectSqsError(h.driver, "PurgeQueue", { QueueUrl: url }, sqsErrors.PurgeQueueInProgress);
      // Nothing purged comes back when visibility or delay would have expired.
      h.clock.advance(61_000);
      expect(await h.receive(url, { MaxNumberOfMessages: 10 })).toEqual([]);
      // Messages sent after the purge survive, and the cooldown has passed.
      await h.send(url, "after");
      expect((await h.counts(url)).visible).toBe(1);
      await h.driver.call("PurgeQueue", { QueueUrl: url });
      expect((await h.counts(url)).visible).toBe(0);
    });
  });

  describe("Tags", () => {
    it("TagQueue merges, UntagQueue removes, ListQueueTags lists", async () => {
      const url = await h.createQueue(undefined, { owner: "infra" });
      await h.driver.call("TagQueue", { QueueUrl: url, Tags: { a: "1", b: "2" } });
      expect((await h.driver.call("ListQueueTags", { QueueUrl: url })).Tags).toEqual({ owner: "infra", a: "1", b: "2" });
      await h.driver.call("TagQueue", { QueueUrl: url, Tags: { a: "changed" } });
      await h.driver.call("UntagQueue", { QueueUrl: url, TagKeys: ["b", "not-there"] });
      expect((await h.driver.call("ListQueueTags", { QueueUrl: url })).Tags).toEqual({ owner: "infra", a: "changed" });
      await h.driver.call("UntagQueue", { QueueUrl: url, TagKeys: ["owner", "a"] });
      const none = await h.driver.call("ListQueueTags", { QueueUrl: url });
      expect(none.Tags ?? {}).toEqual({});
    });

    it("TagQueue without tags and UntagQueue without keys are refused as SQS words it", async () => {
      const url = await h.createQueue(undefined, { kept: "yes" });
      const noTags = withMessage(sqsErrors.MissingParameter, "The request must contain the parameter Tags.");
      await expectSqsError(h.driver, "TagQueue", { QueueUrl: url, Tags: {} }, noTags);
      const keyLength = withMessage(sqsErrors.InvalidParameterValue, "Tag keys must be between 1 and 128 characters in length.");
      await expectSqsError(h.driver, "UntagQueue", { QueueUrl: url, TagKeys: [] }, keyLength);
      await expectSqsError(h.driver, "UntagQueue", { QueueUrl: url, TagKeys: [""] }, keyLength);
      expect((await h.driver.call("ListQueueTags", { QueueUrl: url })).Tags).toEqual({ kept: "yes" });
    });

    it("a queue holds at most 50 tags: a TagQueue or CreateQueue past it fails and changes nothing", async () => {
      const name = h.uniqueName("tags50");
      const url = await h.createQueue(undefined, { first: "1" }, name);
      const many = (n: number, stem: string): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${stem}-${i}`, String(i)]));
      const tooMany = withMessage(sqsErrors.InvalidParameterValue, `Too many tags added for queue ${name}.`);
      await expectSqsError(h.driver, "TagQueue", { QueueUrl: url, Tags: many(50, "k") }, tooMany);
      expect((await h.driver.call("ListQueueTags", { QueueUrl: url })).Tags).toEqual({ first: "1" });
      // 49 more make 50; overwriting an existing key adds none.
      await h.driver.call("TagQueue", { QueueUrl: url, Tags: many(49, "k") });
      await h.driver.call("TagQueue", { QueueUrl: url, Tags: { first: "changed" } });
      const tags = (await h.driver.call("ListQueueTags", { QueueUrl: url })).Tags ?? {};
      expect([Object.keys(tags).length, tags.first]).toEqual([50, "changed"]);
      await expectSqsError(h.driver, "TagQueue", { QueueUrl: url, Tags: { one: "more" } }, tooMany);

      const crowded = h.uniqueName("tags51");
      await expectSqsError(h.driver, "CreateQueue", { QueueName: crowded, tags: many(51, "k") }, withMessage(sqsErrors.InvalidParameterValue, `Too many tags added for queue ${crowded}.`));
      await expectSqsError(h.driver, "GetQueueUrl", { QueueName: crowded }, sqsErrors.QueueDoesNotExist);
    });

    it("tag keys are 1–128 characters and values at most 256, counted as Unicode characters", async () => {
      const url = await h.createQueue();
      const keyLength = withMessage(sqsErrors.InvalidParameterValue, "Tag keys must be between 1 and 128 characters in length.");
      const valueLength = withMessage(sqsErrors.InvalidParameterValue, "Tag values must be between 0 and 256 characters in length.");
      await expectSqsError(h.driver, "TagQueue", { QueueUrl: url, Tags: { ["k".repeat(129)]: "v" } }, keyLength);
      await expectSqsError(h.driver, "TagQueue", { QueueUrl: url, Tags: { k: "v".repeat(257) } }, valueLength);
      await expectSqsError(h.driver, "UntagQueue", { QueueUrl: url, TagKeys: ["k".repeat(129)] }, keyLength);
      await expectSqsError(h.driver, "CreateQueue", { QueueName: h.uniqueName("longtag"), tags: { ["k".repeat(129)]: "v" } }, keyLength);
      expect((await h.driver.call("ListQueueTags", { QueueUrl: url })).Tags ?? {}).toEqual({});
      // At the limits, and with characters outside the BMP (two UTF-16 units, one character each).
      const edges = { ["k".repeat(128)]: "v".repeat(256), ["🏷".repeat(128)]: "💬".repeat(256), empty: "" };
      await h.driver.call("TagQueue", { QueueUrl: url, Tags: edges });
      expect((await h.driver.call("ListQueueTags", { QueueUrl: url })).Tags).toEqual(edges);
      await h.driver.call("UntagQueue", { QueueUrl: url, TagKeys: ["🏷".repeat(128)] });
      expect(Object.keys((await h.driver.call("ListQueueTags", { QueueUrl: url })).Tags ?? {}).sort()).toEqual(["empty", "k".repeat(128)].sort());
    });
  });
}
