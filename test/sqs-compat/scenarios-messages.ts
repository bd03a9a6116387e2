/**
 * Message-level SQS scenarios, run through each real SDK: send (single and batch) with message
 * attributes and verified MD5s, receive options, delete, visibility, delays, and error paths.
 * Time only moves by `h.clock.advance`.
 */
import { describe, expect, it } from "vitest";
import { md5Of, md5OfAttributes } from "../support/md5.js";
import { expectSqsError, sqsErrors, withMessage } from "./drivers.js";
import type { Harness } from "./harness.js";

const oneMiB = 1_048_576;

/** String, Number, Binary and custom-typed attributes. */
function sampleAttributes(): Record<string, { DataType: string; StringValue?: string; BinaryValue?: Uint8Array }> {
  return {
    "trace.id": { DataType: "String", StringValue: "abc-123 ✓" },
    "trace.span": { DataType: "String.custom", StringValue: "span-7" },
    count: { DataType: "Number", StringValue: "-12.5e3" },
    blob: { DataType: "Binary", BinaryValue: new Uint8Array([0, 1, 2, 250, 255]) },
  };
}

function bytesOf(v: Uint8Array | string | undefined): Buffer {
  return typeof v === "string" ? Buffer.from(v, "base64") : Buffer.from(v ?? new Uint8Array());
}

export function messageScenarios(h: Harness): void {
  describe("SendMessage / ReceiveMessage", () => {
    it("round-trips body and String/Number/Binary attributes with correct MD5s", async () => {
      const url = await h.createQueue();
      const attrs = sampleAttributes();
      const body = "héllo, wörld 😀\t\n\r";
      const sent = await h.send(url, body, { MessageAttributes: attrs });
      // A UUID, as SQS's; v7 (time-ordered) rather than SQS's v4: docs/sqs-compatibility.md.
      expect(sent.MessageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(sent.MD5OfMessageBody).toBe(md5Of(body));
      expect(sent.MD5OfMessageAttributes).toBe(md5OfAttributes(attrs));

      const [msg, ...rest] = await h.receive(url, { MessageAttributeNames: ["All"] });
      expect(rest).toEqual([]);
      expect(msg!.MessageId).toBe(sent.MessageId);
      expect(msg!.Body).toBe(body);
      expect(msg!.MD5OfBody).toBe(md5Of(body));
      expect(msg!.ReceiptHandle).toEqual(expect.any(String));
      const got = msg!.MessageAttributes!;
      expect(Object.keys(got).sort()).toEqual(Object.keys(attrs).sort());
      expect(got["trace.id"]).toMatchObject({ DataType: "String", StringValue: "abc-123 ✓" });
      expect(got["trace.span"]).toMatchObject({ DataType: "String.custom", StringValue: "span-7" });
      expect(got.count).toMatchObject({ DataType: "Number", StringValue: "-12.5e3" });
      expect(got.blob!.DataType).toBe("Binary");
      expect(bytesOf(got.blob!.BinaryValue).equals(Buffer.from([0, 1, 2, 250, 255]))).toBe(true);
      expect(msg!.MD5OfMessageAttributes).toBe(md5OfAttributes(attrs));
    });

    it("MessageAttributeNames selects by exact name and by `prefix.*`; the MD5 covers what is returned", async () => {
      const url = await h.createQueue();
      const attrs = sampleAttributes();
      await h.send(url, "selective", { MessageAttributes: attrs });

      const [byPrefix] = await h.receive(url, { MessageAttributeNames: ["trace.*"], VisibilityTimeout: 0 });
      expect(Object.keys(byPrefix!.MessageAttributes ?? {}).sort()).toEqual(["trace.id", "trace.span"]);
      expect(byPrefix!.MD5OfMessageAttributes).toBe(md5OfAttributes({ "trace.id": attrs["trace.id"]!, "trace.span": attrs["trace.span"]! }));

      const [byName] = await h.receive(url, { MessageAttributeNames: ["count", "absent"], VisibilityTimeout: 0 });
      expect(Object.keys(byName!.MessageAttributes ?? {})).toEqual(["count"]);
      expect(byName!.MD5OfMessageAttributes).toBe(md5OfAttributes({ count: attrs.count! }));

      const [none] = await h.receive(url, { VisibilityTimeout: 0 });
      expect(none!.MessageAttributes ?? {}).toEqual({});
    });

    it("MessageAttributeNames `*` selects every attribute, as `All` and `.*` do", async () => {
      const url = await h.createQueue();
      const attrs = sampleAttributes();
      await h.send(url, "star", { MessageAttributes: attrs });
      for (const filter of ["*", ".*", "All"]) {
        const [m] = await h.receive(url, { MessageAttributeNames: [filter], VisibilityTimeout: 0 });
        expect(Object.keys(m!.MessageAttributes ?? {}).sort(), filter).toEqual(Object.keys(attrs).sort());
        expect(m!.MD5OfMessageAttributes, filter).toBe(md5OfAttributes(attrs));
      }
    });

    it("returns system attributes: All, and individual names (deprecated AttributeNames)", async () => {
      const url = await h.createQueue();
      const sentAt = h.clock.nowMs();
      const sent = await h.send(url, "sysattrs");
      h.clock.advance(1_500);
      const firstReceiveAt = h.clock.nowMs();
      const [first] = await h.receive(url, { AttributeNames: ["All"] as never, VisibilityTimeout: 10 });
      expect(first!.MessageId).toBe(sent.MessageId);
      expect(first!.Attributes).toMatchObject({
        SentTimestamp: String(sentAt),
        ApproximateReceiveCount: "1",
        ApproximateFirstReceiveTimestamp: String(firstReceiveAt),
        SenderId: expect.stringMatching(/\S/),
      });

      h.clock.advance(10_000);
      const [second] = await h.receive(url, { AttributeNames: ["ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp"] as never });
      expect(second!.Attributes).toEqual({ ApproximateReceiveCount: "2", ApproximateFirstReceiveTimestamp: String(firstReceiveAt) });
    });

    it("a sender's AWSTraceHeader comes back on receive, with MD5OfMessageSystemAttributes at send", async () => {
      const url = await h.createQueue();
      const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
      const system = { AWSTraceHeader: { DataType: "String", StringValue: trace } };
      const sent = await h.send(url, "traced", { MessageSystemAttributes: system });
      expect(sent.MD5OfMessageSystemAttributes).toBe(md5OfAttributes(system));
      const [m] = await h.receive(url, { AttributeNames: ["AWSTraceHeader"] as never });
      expect(m!.Attributes).toEqual({ AWSTraceHeader: trace });
    });

    it("MaxNumberOfMessages bounds each receive; every message is delivered once across receives", async () => {
      const url = await h.createQueue();
      const bodies = Array.from({ length: 7 }, (_, i) => `m${i}`);
      for (const b of bodies) await h.send(url, b);
      const two = await h.receive(url, { MaxNumberOfMessages: 2 });
      expect(two).toHaveLength(2);
      const rest = await h.receive(url, { MaxNumberOfMessages: 10 });
      expect(rest).toHaveLength(5);
      expect([...two, ...rest].map((m) => m.Body).sort()).toEqual(bodies.sort());
      expect(await h.receive(url, { MaxNumberOfMessages: 10 })).toEqual([]);
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 7, delayed: 0 });
    });

    it("rejects MaxNumberOfMessages outside 1–10 and WaitTimeSeconds outside 0–20 with InvalidParameterValue, in SQS's words", async () => {
      const url = await h.createQueue();
      const max = (n: number) => withMessage(sqsErrors.InvalidParameterValue, `Value ${n} for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.`);
      await expectSqsError(h.driver, "ReceiveMessage", { QueueUrl: url, MaxNumberOfMessages: 11 }, max(11));
      await expectSqsError(h.driver, "ReceiveMessage", { QueueUrl: url, MaxNumberOfMessages: 0 }, max(0));
      const wait = (n: number) => withMessage(sqsErrors.InvalidParameterValue, `Value ${n} for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.`);
      await expectSqsError(h.driver, "ReceiveMessage", { QueueUrl: url, WaitTimeSeconds: 21 }, wait(21));
      await expectSqsError(h.driver, "ReceiveMessage", { QueueUrl: url, WaitTimeSeconds: -1 }, wait(-1));
    });

    it("a VisibilityTimeout override on receive replaces the queue's", async () => {
      const url = await h.createQueue({ VisibilityTimeout: "30" });
      await h.send(url, "short");
      await h.send(url, "default");
      const [short] = await h.receive(url, { VisibilityTimeout: 5 });
      const [dflt] = await h.receive(url);
      expect([short!.Body, dflt!.Body].sort()).toEqual(["default", "short"]);
      h.clock.advance(5_000);
      const back = await h.receive(url, { MaxNumberOfMessages: 10 });
      expect(back.map((m) => m.Body)).toEqual([short!.Body]);
      h.clock.advance(25_000);
      const later = await h.receive(url, { MaxNumberOfMessages: 10 });
      expect(later.map((m) => m.Body)).toEqual([dflt!.Body]);
    });

    it("ApproximateNumberOfMessages / NotVisible / Delayed track each state", async () => {
      const url = await h.createQueue();
      await h.send(url, "a");
      await h.send(url, "b");
      await h.send(url, "c", { DelaySeconds: 10 });
      expect(await h.counts(url)).toEqual({ visible: 2, notVisible: 0, delayed: 1 });
      await h.receive(url);
      expect(await h.counts(url)).toEqual({ visible: 1, notVisible: 1, delayed: 1 });
      h.clock.advance(10_000);
      expect(await h.counts(url)).toEqual({ visible: 2, notVisible: 1, delayed: 0 });
      h.clock.advance(20_000);
      expect(await h.counts(url)).toEqual({ visible: 3, notVisible: 0, delayed: 0 });
    });
  });

  describe("Delays", () => {
    it("a queue's DelaySeconds holds every message; a per-message DelaySeconds overrides it", async () => {
      const url = await h.createQueue({ DelaySeconds: "10" });
      await h.send(url, "queue-delay");
      await h.send(url, "short-delay", { DelaySeconds: 5 });
      await h.send(url, "no-delay", { DelaySeconds: 0 });
      expect(await h.counts(url)).toEqual({ visible: 1, notVisible: 0, delayed: 2 });
      expect((await h.receive(url, { MaxNumberOfMessages: 10, VisibilityTimeout: 600 })).map((m) => m.Body)).toEqual(["no-delay"]);
      h.clock.advance(4_999);
      expect(await h.receive(url, { MaxNumberOfMessages: 10, VisibilityTimeout: 600 })).toEqual([]);
      h.clock.advance(1);
      expect((await h.receive(url, { MaxNumberOfMessages: 10, VisibilityTimeout: 600 })).map((m) => m.Body)).toEqual(["short-delay"]);
      expect((await h.counts(url)).delayed).toBe(1);
      h.clock.advance(5_000);
      expect((await h.receive(url, { MaxNumberOfMessages: 10, VisibilityTimeout: 600 })).map((m) => m.Body)).toEqual(["queue-delay"]);
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 3, delayed: 0 });
    });

    it("rejects a per-message DelaySeconds above 900 with InvalidParameterValue", async () => {
      const url = await h.createQueue();
      await expectSqsError(h.driver, "SendMessage", { QueueUrl: url, MessageBody: "x", DelaySeconds: 901 }, sqsErrors.InvalidParameterValue);
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
    });

    it("rejects a Number attribute beyond SQS's range (10^-128 to 10^126) with InvalidParameterValue", async () => {
      const url = await h.createQueue();
      for (const value of ["1e400", "2e126", "1e-129"]) {
        const MessageAttributes = { n: { DataType: "Number", StringValue: value } };
        await expectSqsError(h.driver, "SendMessage", { QueueUrl: url, MessageBody: "x", MessageAttributes }, sqsErrors.InvalidParameterValue);
      }
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
    });
  });

  describe("SendMessageBatch", () => {
    it("sends every entry with per-entry MD5s and ids", async () => {
      const url = await h.createQueue();
      const attrs = sampleAttributes();
      const res = await h.driver.call("SendMessageBatch", {
        QueueUrl: url,
        Entries: [
          { Id: "plain", MessageBody: "one" },
          { Id: "with-attrs", MessageBody: "two", MessageAttributes: attrs },
          { Id: "delayed_1", MessageBody: "three", DelaySeconds: 30 },
        ],
      });
      expect(res.Failed ?? []).toEqual([]);
      const byId = new Map((res.Successful ?? []).map((s) => [s.Id, s]));
      expect([...byId.keys()].sort()).toEqual(["delayed_1", "plain", "with-attrs"]);
      expect(byId.get("plain")!.MD5OfMessageBody).toBe(md5Of("one"));
      expect(byId.get("plain")!.MD5OfMessageAttributes).toBeUndefined();
      expect(byId.get("with-attrs")!.MD5OfMessageAttributes).toBe(md5OfAttributes(attrs));
      expect(new Set((res.Successful ?? []).map((s) => s.MessageId)).size).toBe(3);
      expect(await h.counts(url)).toEqual({ visible: 2, notVisible: 0, delayed: 1 });
    });

    it("reports bad entries in Failed while the good ones are sent", async () => {
      const url = await h.createQueue();
      const res = await h.driver.call("SendMessageBatch", {
        QueueUrl: url,
        Entries: [
          { Id: "ok1", MessageBody: "fine" },
          { Id: "badchar", MessageBody: "nul\u0000byte" },
          { Id: "baddelay", MessageBody: "x", DelaySeconds: 1000 },
          { Id: "badnumber", MessageBody: "x", MessageAttributes: { n: { DataType: "Number", StringValue: "not-a-number" } } },
          { Id: "ok2", MessageBody: "also fine" },
        ],
      });
      expect((res.Successful ?? []).map((s) => s.Id).sort()).toEqual(["ok1", "ok2"]);
      const failed = new Map((res.Failed ?? []).map((f) => [f.Id, f]));
      expect([...failed.keys()].sort()).toEqual(["badchar", "baddelay", "badnumber"]);
      expect(failed.get("badchar")).toMatchObject({ Code: "InvalidMessageContents", SenderFault: true });
      expect(failed.get("baddelay")).toMatchObject({ Code: "InvalidParameterValue", SenderFault: true });
      expect(failed.get("badnumber")).toMatchObject({ Code: "InvalidParameterValue", SenderFault: true });
      for (const f of failed.values()) expect(f.Message).toEqual(expect.stringMatching(/\S/));
      const got = await h.receive(url, { MaxNumberOfMessages: 10 });
      expect(got.map((m) => m.Body).sort()).toEqual(["also fine", "fine"]);
    });

    it("rejects empty, oversized, duplicate-id and bad-id batches as a whole", async () => {
      const url = await h.createQueue();
      const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: `e${i}`, MessageBody: "x" }));
      await expectSqsError(h.driver, "SendMessageBatch", { QueueUrl: url, Entries: eleven }, sqsErrors.TooManyEntriesInBatchRequest);
      await expectSqsError(h.driver, "SendMessageBatch", { QueueUrl: url, Entries: [{ Id: "same", MessageBody: "1" }, { Id: "same", MessageBody: "2" }] }, sqsErrors.BatchEntryIdsNotDistinct);
      await expectSqsError(h.driver, "SendMessageBatch", { QueueUrl: url, Entries: [] }, sqsErrors.EmptyBatchRequest);
      await expectSqsError(h.driver, "SendMessageBatch", { QueueUrl: url, Entries: [{ Id: "bad id!", MessageBody: "1" }] }, sqsErrors.InvalidBatchEntryId);
      // Each entry is under 1 MiB, but together they are over it.
      const big = "b".repeat(600 * 1024);
      await expectSqsError(
        h.driver,
        "SendMessageBatch",
        { QueueUrl: url, Entries: [{ Id: "big1", MessageBody: big }, { Id: "big2", MessageBody: big }] },
        sqsErrors.BatchRequestTooLong,
      );
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
    });
  });

  describe("DeleteMessage / DeleteMessageBatch", () => {
    it("DeleteMessage removes a received message for good", async () => {
      const url = await h.createQueue();
      await h.send(url, "bye");
      const [m] = await h.receive(url);
      await h.driver.call("DeleteMessage", { QueueUrl: url, ReceiptHandle: m!.ReceiptHandle! });
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
      h.clock.advance(31_000);
      expect(await h.receive(url)).toEqual([]);
    });

    it("a malformed receipt handle is ReceiptHandleIsInvalid (404)", async () => {
      const url = await h.createQueue();
      await expectSqsError(h.driver, "DeleteMessage", { QueueUrl: url, ReceiptHandle: "not-a-receipt-handle" }, sqsErrors.ReceiptHandleIsInvalid);
    });

    it("DeleteMessageBatch deletes the good entries and reports bad handles in Failed", async () => {
      const url = await h.createQueue();
      for (const b of ["a", "b", "c"]) await h.send(url, b);
      const got = await h.receive(url, { MaxNumberOfMessages: 10 });
      expect(got).toHaveLength(3);
      const res = await h.driver.call("DeleteMessageBatch", {
        QueueUrl: url,
        Entries: [
          { Id: "d0", ReceiptHandle: got[0]!.ReceiptHandle! },
          { Id: "bogus", ReceiptHandle: "garbage" },
          { Id: "d1", ReceiptHandle: got[1]!.ReceiptHandle! },
        ],
      });
      expect((res.Successful ?? []).map((s) => s.Id).sort()).toEqual(["d0", "d1"]);
      expect(res.Failed ?? []).toEqual([expect.objectContaining({ Id: "bogus", Code: "ReceiptHandleIsInvalid", SenderFault: true })]);
      h.clock.advance(31_000);
      const left = await h.receive(url, { MaxNumberOfMessages: 10 });
      expect(left.map((m) => m.Body)).toEqual([got[2]!.Body]);
    });

    it("rejects empty, oversized and duplicate-id delete batches", async () => {
      const url = await h.createQueue();
      const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: `e${i}`, ReceiptHandle: "x" }));
      await expectSqsError(h.driver, "DeleteMessageBatch", { QueueUrl: url, Entries: eleven }, sqsErrors.TooManyEntriesInBatchRequest);
      await expectSqsError(h.driver, "DeleteMessageBatch", { QueueUrl: url, Entries: [{ Id: "s", ReceiptHandle: "x" }, { Id: "s", ReceiptHandle: "y" }] }, sqsErrors.BatchEntryIdsNotDistinct);
      await expectSqsError(h.driver, "DeleteMessageBatch", { QueueUrl: url, Entries: [] }, sqsErrors.EmptyBatchRequest);
    });
  });

  describe("Visibility", () => {
    it("visibility 0 returns a message at once with a new handle; the first handle still deletes it, and deleting again with either succeeds", async () => {
      const url = await h.createQueue();
      const sent = await h.send(url, "again");
      const [first] = await h.receive(url, { AttributeNames: ["ApproximateReceiveCount"] as never });
      expect(first!.Attributes?.ApproximateReceiveCount).toBe("1");
      await h.driver.call("ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: first!.ReceiptHandle!, VisibilityTimeout: 0 });
      const [second] = await h.receive(url, { AttributeNames: ["ApproximateReceiveCount"] as never });
      expect(second!.MessageId).toBe(sent.MessageId);
      expect(second!.Attributes?.ApproximateReceiveCount).toBe("2");
      expect(second!.ReceiptHandle).not.toBe(first!.ReceiptHandle);

      // As SQS: a standard queue's older handle deletes the message (docs/sqs-compatibility.md,
      // "Receipt handles after a lease ends"), and deletes are idempotent with either handle.
      await h.driver.call("DeleteMessage", { QueueUrl: url, ReceiptHandle: first!.ReceiptHandle! });
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
      await h.driver.call("DeleteMessage", { QueueUrl: url, ReceiptHandle: first!.ReceiptHandle! });
      await h.driver.call("DeleteMessage", { QueueUrl: url, ReceiptHandle: second!.ReceiptHandle! });
      const batch = await h.driver.call("DeleteMessageBatch", {
        QueueUrl: url,
        Entries: [
          { Id: "first", ReceiptHandle: first!.ReceiptHandle! },
          { Id: "second", ReceiptHandle: second!.ReceiptHandle! },
        ],
      });
      expect((batch.Successful ?? []).map((e) => e.Id).sort()).toEqual(["first", "second"]);
      h.clock.advance(30_000);
      expect(await h.receive(url)).toEqual([]);
    });

    it("ChangeMessageVisibility extends a lease; once the lease ran out (no receive since) it succeeds and changes nothing", async () => {
      const url = await h.createQueue({ VisibilityTimeout: "10" });
      await h.send(url, "lease");
      const [m] = await h.receive(url);
      h.clock.advance(9_000);
      await h.driver.call("ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: m!.ReceiptHandle!, VisibilityTimeout: 60 });
      h.clock.advance(59_999);
      expect(await h.receive(url)).toEqual([]);
      h.clock.advance(1);
      expect(await h.counts(url)).toEqual({ visible: 1, notVisible: 0, delayed: 0 });
      // As SQS answered in a recorded response (docs/sqs-compatibility.md, "Receipt handles after a
      // lease ends"): 200, and the message is not hidden again.
      await h.driver.call("ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: m!.ReceiptHandle!, VisibilityTimeout: 30 });
      expect(await h.counts(url)).toEqual({ visible: 1, notVisible: 0, delayed: 0 });
      const [again] = await h.receive(url, { AttributeNames: ["ApproximateReceiveCount"] as never });
      expect(again!.Body).toBe("lease");
      expect(again!.Attributes?.ApproximateReceiveCount).toBe("2");
      await expectSqsError(h.driver, "ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: "garbage", VisibilityTimeout: 30 }, sqsErrors.ReceiptHandleIsInvalid);
    });

    it("ChangeMessageVisibilityBatch: an entry whose lease ran out (no receive since) lands in Successful and changes nothing", async () => {
      const url = await h.createQueue({ VisibilityTimeout: "10" });
      await h.send(url, "expired");
      const [first] = await h.receive(url);
      h.clock.advance(5_000);
      await h.send(url, "live");
      const [live] = await h.receive(url);
      expect([first!.Body, live!.Body]).toEqual(["expired", "live"]);
      // "expired"'s lease ends at 10 s, "live"'s at 15 s.
      h.clock.advance(5_000);
      expect(await h.counts(url)).toEqual({ visible: 1, notVisible: 1, delayed: 0 });
      const batch = await h.driver.call("ChangeMessageVisibilityBatch", {
        QueueUrl: url,
        Entries: [
          { Id: "expired", ReceiptHandle: first!.ReceiptHandle!, VisibilityTimeout: 60 },
          { Id: "live", ReceiptHandle: live!.ReceiptHandle!, VisibilityTimeout: 60 },
        ],
      });
      expect((batch.Successful ?? []).map((e) => e.Id).sort()).toEqual(["expired", "live"]);
      expect(batch.Failed ?? []).toEqual([]);
      // The expired entry hid nothing; the live one was extended.
      expect(await h.counts(url)).toEqual({ visible: 1, notVisible: 1, delayed: 0 });
      const again = await h.receive(url, { MaxNumberOfMessages: 10, AttributeNames: ["ApproximateReceiveCount"] as never });
      expect(again.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount])).toEqual([["expired", "2"]]);
      // Past "live"'s original 15 s it is still hidden: its entry was applied.
      h.clock.advance(5_000);
      expect(await h.receive(url, { VisibilityTimeout: 0 })).toEqual([]);
    });

    it("a handle from an earlier receive changes the visibility of the current lease (and each batch entry), as SQS does", async () => {
      const url = await h.createQueue({ VisibilityTimeout: "10" });
      await h.send(url, "twice");
      const [first] = await h.receive(url);
      h.clock.advance(10_000);
      const [second] = await h.receive(url);
      expect(second!.Body).toBe("twice");
      // The second lease would end at 20 s; the first handle stretches it to 70 s.
      await h.driver.call("ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: first!.ReceiptHandle!, VisibilityTimeout: 60 });
      h.clock.advance(59_999);
      expect(await h.receive(url)).toEqual([]);
      const batch = await h.driver.call("ChangeMessageVisibilityBatch", {
        QueueUrl: url,
        Entries: [{ Id: "old", ReceiptHandle: first!.ReceiptHandle!, VisibilityTimeout: 0 }],
      });
      expect((batch.Successful ?? []).map((e) => e.Id)).toEqual(["old"]);
      expect(batch.Failed ?? []).toEqual([]);
      const [third] = await h.receive(url, { AttributeNames: ["ApproximateReceiveCount"] as never });
      expect([third!.Body, third!.Attributes?.ApproximateReceiveCount]).toEqual(["twice", "3"]);
      // The second handle still names the message too.
      await h.driver.call("DeleteMessage", { QueueUrl: url, ReceiptHandle: second!.ReceiptHandle! });
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
    });

    it("a handle whose visibility ran out still deletes its message while no one received it again (standard queue)", async () => {
      const url = await h.createQueue({ VisibilityTimeout: "10" });
      await h.send(url, "late");
      const [m] = await h.receive(url);
      h.clock.advance(10_000);
      expect(await h.counts(url)).toEqual({ visible: 1, notVisible: 0, delayed: 0 });
      await h.driver.call("DeleteMessage", { QueueUrl: url, ReceiptHandle: m!.ReceiptHandle! });
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
    });

    it("rejects a VisibilityTimeout above 12 h with InvalidParameterValue", async () => {
      const url = await h.createQueue();
      await h.send(url, "x");
      const [m] = await h.receive(url);
      await expectSqsError(h.driver, "ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: m!.ReceiptHandle!, VisibilityTimeout: 43_201 }, sqsErrors.InvalidParameterValue);
      await expectSqsError(h.driver, "ReceiveMessage", { QueueUrl: url, VisibilityTimeout: 43_201 }, sqsErrors.InvalidParameterValue);
    });

    it("ChangeMessageVisibilityBatch applies per entry and reports bad handles in Failed", async () => {
      const url = await h.createQueue();
      await h.send(url, "now");
      await h.send(url, "later");
      const got = await h.receive(url, { MaxNumberOfMessages: 10 });
      const byBody = new Map(got.map((m) => [m.Body, m]));
      const res = await h.driver.call("ChangeMessageVisibilityBatch", {
        QueueUrl: url,
        Entries: [
          { Id: "now", ReceiptHandle: byBody.get("now")!.ReceiptHandle!, VisibilityTimeout: 0 },
          { Id: "later", ReceiptHandle: byBody.get("later")!.ReceiptHandle!, VisibilityTimeout: 60 },
          { Id: "bogus", ReceiptHandle: "garbage", VisibilityTimeout: 0 },
        ],
      });
      expect((res.Successful ?? []).map((s) => s.Id).sort()).toEqual(["later", "now"]);
      expect(res.Failed ?? []).toEqual([expect.objectContaining({ Id: "bogus", Code: "ReceiptHandleIsInvalid", SenderFault: true })]);
      expect((await h.receive(url, { MaxNumberOfMessages: 10, VisibilityTimeout: 600 })).map((m) => m.Body)).toEqual(["now"]);
      h.clock.advance(59_999);
      expect(await h.receive(url, { MaxNumberOfMessages: 10 })).toEqual([]);
      h.clock.advance(1);
      expect((await h.receive(url, { MaxNumberOfMessages: 10 })).map((m) => m.Body)).toEqual(["later"]);
    });

    it("rejects empty, oversized and duplicate-id visibility batches", async () => {
      const url = await h.createQueue();
      const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: `e${i}`, ReceiptHandle: "x", VisibilityTimeout: 1 }));
      await expectSqsError(h.driver, "ChangeMessageVisibilityBatch", { QueueUrl: url, Entries: eleven }, sqsErrors.TooManyEntriesInBatchRequest);
      await expectSqsError(
        h.driver,
        "ChangeMessageVisibilityBatch",
        { QueueUrl: url, Entries: [{ Id: "s", ReceiptHandle: "x" }, { Id: "s", ReceiptHandle: "y" }] },
        sqsErrors.BatchEntryIdsNotDistinct,
      );
      await expectSqsError(h.driver, "ChangeMessageVisibilityBatch", { QueueUrl: url, Entries: [] }, sqsErrors.EmptyBatchRequest);
    });
  });

  describe("Message limits and contents", () => {
    it("accepts a body of exactly 1 MiB and rejects 1 MiB + 1 byte with InvalidParameterValue", async () => {
      const url = await h.createQueue();
      const max = "a".repeat(oneMiB);
      const sent = await h.send(url, max);
      expect(sent.MD5OfMessageBody).toBe(md5Of(max));
      await expectSqsError(h.driver, "SendMessage", { QueueUrl: url, MessageBody: max + "a" }, sqsErrors.InvalidParameterValue);
      const [m] = await h.receive(url);
      expect(m!.Body!.length).toBe(oneMiB);
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 1, delayed: 0 });
    });

    it("counts attributes toward the 1 MiB limit", async () => {
      const url = await h.createQueue();
      const body = "a".repeat(oneMiB - 10);
      await expectSqsError(
        h.driver,
        "SendMessage",
        { QueueUrl: url, MessageBody: body, MessageAttributes: { attribute: { DataType: "String", StringValue: "0123456789" } } },
        sqsErrors.InvalidParameterValue,
      );
      expect((await h.counts(url)).visible).toBe(0);
    });

    it("rejects characters outside the SQS set with InvalidMessageContents; accepts the edges of the set", async () => {
      const url = await h.createQueue();
      for (const bad of ["nul\u0000", "bell\u0007", "\uFFFE", "\uFFFF"]) {
        await expectSqsError(h.driver, "SendMessage", { QueueUrl: url, MessageBody: bad }, sqsErrors.InvalidMessageContents);
      }
      const edges = "\t\n\r \uD7FF\uE000\uFFFD\u{10000}\u{10FFFF}";
      await h.send(url, edges);
      const [m] = await h.receive(url);
      expect(m!.Body).toBe(edges);
      expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 1, delayed: 0 });
    });
  });
}
