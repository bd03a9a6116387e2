/**
 * Receipt handles are signed with a secret the store keeps: a handle received before a restart
 * still deletes its message after it (both SDKs), and a handle signed by another data directory's
 * secret is refused.
 */
import { CreateQueueCommand, DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, it } from "vitest";
import { destroyV2, sqsV2, sqsV3 } from "../support/clients.js";
import { startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

async function inFlight(url: string, queueUrl: string): Promise<string> {
  const client = sqsV3(url);
  const res = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["ApproximateNumberOfMessagesNotVisible"] }));
  client.destroy();
  return res.Attributes!.ApproximateNumberOfMessagesNotVisible!;
}

describe("receipt handles across a restart", () => {
  it("a handle from before the restart deletes its message after it; another data dir's handle is refused", async () => {
    const dataDir = await makeTempDir("sluice-receipts-");
    const before = await startTestServer({ dataDir });
    const v3 = sqsV3(before.url);
    const { QueueUrl } = await v3.send(new CreateQueueCommand({ QueueName: "kept-handles" }));
    for (const body of ["one", "two"]) await v3.send(new SendMessageCommand({ QueueUrl, MessageBody: body }));
    const { Messages } = await v3.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 2, VisibilityTimeout: 600 }));
    expect(Messages).toHaveLength(2);
    v3.destroy();
    await before.stop({ keepDataDir: true });

    const after = await startTestServer({ dataDir });
    const queueUrl = `${after.url}/000000000000/kept-handles`;
    const v3After = sqsV3(after.url);
    await v3After.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: Messages![0]!.ReceiptHandle! }));
    const v2After = sqsV2(after.url);
    await v2After.deleteMessage({ QueueUrl: queueUrl, ReceiptHandle: Messages![1]!.ReceiptHandle! }).promise();
    expect(await inFlight(after.url, queueUrl)).toBe("0");

    // A server on another data dir has its own secret: the same queue name, the same ids, but not its handles.
    const other = await startTestServer();
    const otherV3 = sqsV3(other.url);
    const otherQueue = (await otherV3.send(new CreateQueueCommand({ QueueName: "kept-handles" }))).QueueUrl!;
    await otherV3.send(new SendMessageCommand({ QueueUrl: otherQueue, MessageBody: "one" }));
    await otherV3.send(new ReceiveMessageCommand({ QueueUrl: otherQueue, VisibilityTimeout: 600 }));
    const refused = await otherV3.send(new DeleteMessageCommand({ QueueUrl: otherQueue, ReceiptHandle: Messages![0]!.ReceiptHandle! })).catch((err: unknown) => err);
    expect(refused).toMatchObject({ name: "ReceiptHandleIsInvalid", $metadata: { httpStatusCode: 404 } });
    expect(await inFlight(other.url, otherQueue)).toBe("1");
    for (const c of [v3After, otherV3]) c.destroy();
    destroyV2(v2After);
  }, 60_000);
});
