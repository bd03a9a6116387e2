/**
 * sqs-consumer (the most used Node SQS worker library) drains 1,000 messages end to end through
 * @aws-sdk/client-sqs: each handled exactly once, then the queue is empty. The consumer is
 * stopped (and its last poll finished) before the server closes.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, type Message, SendMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { Consumer } from "sqs-consumer";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { sqsV3 } from "../support/clients.js";
import { startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

const total = 1_000;
let consumer: Consumer | undefined;
const clients: SQSClient[] = [];

async function stopConsumer(c: Consumer): Promise<void> {
  if (c.status.isRunning) {
    const stopped = new Promise<void>((resolve) => c.once("stopped", () => resolve()));
    c.stop({ abort: true });
    await stopped;
  }
  // The aborted receive settles asynchronously; no poll may outlive the test.
  await waitFor(() => !c.status.isPolling, { timeoutMs: 5_000, what: "the consumer's last poll to settle" });
}

afterEach(async () => {
  if (consumer) await stopConsumer(consumer);
  consumer = undefined;
});

afterAll(async () => {
  for (const c of clients) c.destroy();
  await stopAllServers();
  await removeTempDirs();
});

async function counts(client: SQSClient, queueUrl: string): Promise<{ visible: number; notVisible: number }> {
  const res = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"] }),
  );
  return { visible: Number(res.Attributes!.ApproximateNumberOfMessages), notVisible: Number(res.Attributes!.ApproximateNumberOfMessagesNotVisible) };
}

describe("sqs-consumer against Sluice", () => {
  it(`consumes ${total} messages, each exactly once, and leaves the queue empty`, async () => {
    const server = await startTestServer();
    const client = sqsV3(server.url);
    clients.push(client);
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: "consumer-e2e", Attributes: { VisibilityTimeout: "60" } }));
    const queueUrl = QueueUrl!;

    const sentIdByBody = new Map<string, string>();
    for (let batch = 0; batch < total / 10; batch++) {
      const entries = Array.from({ length: 10 }, (_, i) => ({ Id: `e${i}`, MessageBody: `message-${batch * 10 + i}` }));
      const res = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      expect(res.Failed ?? []).toEqual([]);
      for (const ok of res.Successful!) sentIdByBody.set(entries[Number(ok.Id!.slice(1))]!.MessageBody, ok.MessageId!);
    }
    expect(sentIdByBody.size).toBe(total);
    expect(new Set(sentIdByBody.values()).size).toBe(total);

    const handledById = new Map<string, number>();
    const handledBodies: string[] = [];
    const errors: unknown[] = [];
    consumer = Consumer.create({
      queueUrl,
      sqs: client,
      batchSize: 10,
      waitTimeSeconds: 20,
      handleMessage: async (message: Message) => {
        handledById.set(message.MessageId!, (handledById.get(message.MessageId!) ?? 0) + 1);
        handledBodies.push(message.Body!);
        return message;
      },
    });
    consumer.on("error", (err) => errors.push(err));
    consumer.on("processing_error", (err) => errors.push(err));
    consumer.on("timeout_error", (err) => errors.push(err));
    consumer.start();

    await waitFor(() => handledBodies.length >= total, { timeoutMs: 50_000, what: `${total} messages handled` });
    // The consumer deletes each message after its handler resolves; wait for the queue to empty.
    await waitFor(async () => {
      const c = await counts(client, queueUrl);
      return c.visible === 0 && c.notVisible === 0;
    }, { timeoutMs: 20_000, intervalMs: 50, what: "the queue to be empty" });

    // Errors up to here are real; stopping with abort makes the pending long poll fail by design.
    const errorsWhileRunning = [...errors];
    await stopConsumer(consumer);
    consumer = undefined;

    expect(errorsWhileRunning).toEqual([]);
    expect(handledBodies).toHaveLength(total);
    expect(new Set(handledBodies).size).toBe(total);
    expect(handledById.size).toBe(total);
    expect([...handledById.values()].every((n) => n === 1)).toBe(true);
    for (const [body, id] of sentIdByBody) expect(handledById.get(id), body).toBe(1);
    expect(await counts(client, queueUrl)).toEqual({ visible: 0, notVisible: 0 });
    await server.stop();
  });
});
