/**
 * Every standard-queue action through @aws-sdk/client-sqs v3 (JSON 1.0 protocol), against an
 * in-process server on a ManualClock. The SDK verifies MD5OfMessageBody itself; attribute digests
 * are checked against an independent oracle (test/support/md5.ts).
 */
import { CreateQueueCommand, DeleteMessageCommand, ListQueuesCommand, ReceiveMessageCommand, SQSClient, SendMessageCommand } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { credentials, region, sqsV3 } from "../support/clients.js";
import { v3Driver } from "./drivers.js";
import { accountId, useHarness } from "./harness.js";
import { lifecycleScenarios } from "./scenarios-lifecycle.js";
import { messageScenarios } from "./scenarios-messages.js";
import { queueScenarios } from "./scenarios-queues.js";

const h = useHarness((server) => v3Driver(sqsV3(server.url)));

describe("SQS compatibility: SDK v3, JSON protocol", () => {
  queueScenarios(h);
  messageScenarios(h);
  lifecycleScenarios(h);

  describe("v3 only", () => {
    it("speaks JSON 1.0: X-Amz-Target, application/x-amz-json-1.0 both ways", async () => {
      const url = await h.createQueue();
      const client = sqsV3(h.server.url);
      const seen: Array<{ target?: string; contentType?: string; status?: number; responseType?: string }> = [];
      client.middlewareStack.add(
        (next) => async (args) => {
          const req = args.request as { headers: Record<string, string> };
          const out = await next(args);
          const res = out.response as { statusCode: number; headers: Record<string, string> };
          seen.push({ target: req.headers["x-amz-target"], contentType: req.headers["content-type"], status: res.statusCode, responseType: res.headers["content-type"] });
          return out;
        },
        { step: "deserialize", name: "captureWire" },
      );
      await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "wire" }));
      expect(seen).toEqual([
        { target: "AmazonSQS.SendMessage", contentType: "application/x-amz-json-1.0", status: 200, responseType: expect.stringContaining("application/x-amz-json-1.0") },
      ]);
      client.destroy();
    });

    it("a client without an endpoint finds Sluice through AWS_ENDPOINT_URL_SQS (the README's claim for client-sqs ≥ 3.428.0)", async () => {
      const before = process.env.AWS_ENDPOINT_URL_SQS;
      process.env.AWS_ENDPOINT_URL_SQS = h.server.url;
      const client = new SQSClient({ region, credentials, maxAttempts: 1 });
      try {
        const name = h.uniqueName("env");
        const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: name }));
        expect(QueueUrl).toBe(`${h.server.url}/${accountId}/${name}`);
      } finally {
        client.destroy();
        if (before === undefined) delete process.env.AWS_ENDPOINT_URL_SQS;
        else process.env.AWS_ENDPOINT_URL_SQS = before;
      }
    });

    it("a client whose endpoint is the queue URL (JSON to `/<account>/<queue>/`) is answered there, as SQS does", async () => {
      // LocalStack's AWS-validated test_send_message_via_queue_url_with_json_protocol: SQS answers
      // a JSON-protocol receive sent to the queue URL itself with 200.
      const url = await h.createQueue();
      const onQueue = sqsV3(url);
      const paths: string[] = [];
      onQueue.middlewareStack.add(
        (next) => async (args) => {
          paths.push((args.request as { path: string }).path);
          return next(args);
        },
        { step: "finalizeRequest", name: "capturePath" },
      );
      try {
        await onQueue.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "via its own URL" }));
        const { Messages } = await onQueue.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
        expect(Messages?.map((m) => m.Body)).toEqual(["via its own URL"]);
        await onQueue.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: Messages![0]!.ReceiptHandle! }));
        expect(await h.counts(url)).toEqual({ visible: 0, notVisible: 0, delayed: 0 });
        // As on the query protocol, an action that takes no queue is not for a queue's URL.
        await expect(onQueue.send(new ListQueuesCommand({}))).rejects.toMatchObject({ name: "InvalidAction", $metadata: { httpStatusCode: 400 } });
        expect(new Set(paths)).toEqual(new Set([`${new URL(url).pathname}/`]));
      } finally {
        onQueue.destroy();
      }
    });

    it("MessageSystemAttributeNames: All and individual names", async () => {
      const url = await h.createQueue();
      const sentAt = h.clock.nowMs();
      await h.send(url, "sys");
      h.clock.advance(250);
      const receivedAt = h.clock.nowMs();
      const client = sqsV3(h.server.url);

      const all = await client.send(new ReceiveMessageCommand({ QueueUrl: url, MessageSystemAttributeNames: ["All"], VisibilityTimeout: 0 }));
      expect(all.Messages![0]!.Attributes).toMatchObject({
        SentTimestamp: String(sentAt),
        ApproximateReceiveCount: "1",
        ApproximateFirstReceiveTimestamp: String(receivedAt),
        SenderId: expect.stringMatching(/\S/),
      });

      const sentOnly = await client.send(new ReceiveMessageCommand({ QueueUrl: url, MessageSystemAttributeNames: ["SentTimestamp"], VisibilityTimeout: 0 }));
      expect(sentOnly.Messages![0]!.Attributes).toEqual({ SentTimestamp: String(sentAt) });

      const some = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MessageSystemAttributeNames: ["ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp", "SenderId"],
          VisibilityTimeout: 0,
        }),
      );
      expect(some.Messages![0]!.Attributes).toEqual({
        ApproximateReceiveCount: "3",
        ApproximateFirstReceiveTimestamp: String(receivedAt),
        SenderId: all.Messages![0]!.Attributes!.SenderId,
      });

      const none = await client.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 0 }));
      expect(none.Messages![0]!.Attributes ?? {}).toEqual({});
      client.destroy();
    });
  });
});
