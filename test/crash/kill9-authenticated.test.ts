/**
 * kill -9 under authenticated load: signed SQS sends (SDK v3, SigV4) and bearer-token job submits
 * run while wrong keys and wrong tokens are refused alongside; the server is SIGKILLed mid-load
 * and restarted on the same data dir and credentials. Every acknowledged send and submit is there
 * after the restart, and no secret or token appears in anything the server printed.
 */
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient, SendMessageCommand } from "@aws-sdk/client-sqs";
import { Sluice } from "@sluice/client";
import { afterAll, describe, expect, it } from "vitest";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const accessKeyId = "AKIDCRASH";
const secretAccessKey = "crash-secret-0123456789abcdef";
const token = "crash-token-0123456789abcdef";
const env = { SLUICE_ACCESS_KEY_ID: accessKeyId, SLUICE_SECRET_ACCESS_KEY: secretAccessKey, SLUICE_API_TOKEN: token };

afterAll(async () => {
  await killAllChildren();
  await removeTempDirs();
});

function sqs(url: string, secret = secretAccessKey): SQSClient {
  return new SQSClient({ endpoint: url, region: "us-east-1", credentials: { accessKeyId, secretAccessKey: secret }, maxAttempts: 1 });
}

describe("kill -9 under authenticated load", () => {
  it("keeps every acknowledged signed send and token-authenticated submit, and logs no secret", async () => {
    const dataDir = await makeTempDir("sluice-kill9-auth-");
    const first = await spawnCli({ dataDir, env });
    const client = sqs(first.url);
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: "crash-auth" }));
    const jobs = new Sluice({ url: first.url, token, attempts: 1 });
    const sent = new Set<string>();
    const submitted = new Set<string>();
    let refused = 0;
    let stop = false;

    const senders = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const body = `m-${w}-${i}`;
        try {
          await client.send(new SendMessageCommand({ QueueUrl, MessageBody: body }));
          sent.add(body);
        } catch {
          return; // the server is gone: unacknowledged, so it may or may not be there
        }
      }
    });
    const submitters = Array.from({ length: 2 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        try {
          submitted.add((await jobs.queue("crash-jobs").submit({ w, i })).id);
        } catch {
          return;
        }
      }
    });
    const intruders = (async () => {
      const wrongKey = sqs(first.url, "wrong-secret-0123456789abcdef");
      const wrongToken = new Sluice({ url: first.url, token: "not-the-token-0123456789", attempts: 1 });
      while (!stop) {
        await wrongKey.send(new SendMessageCommand({ QueueUrl, MessageBody: "intruder" })).catch(() => refused++);
        await wrongToken.queue("crash-jobs").submit({ intruder: true }).catch(() => refused++);
      }
      wrongKey.destroy();
    })();

    // Load for a while, then SIGKILL mid-flight.
    while (sent.size < 100 || submitted.size < 50) await new Promise((r) => setTimeout(r, 50));
    first.child.kill("SIGKILL");
    await first.exited;
    stop = true;
    await Promise.all([...senders, ...submitters, intruders]);
    client.destroy();
    expect(refused).toBeGreaterThan(0);

    const second = await spawnCli({ dataDir, env });
    const after = sqs(second.url);
    const seen = new Set<string>();
    for (;;) {
      const { Messages = [] } = await after.send(new ReceiveMessageCommand({ QueueUrl: `${second.url}/000000000000/crash-auth`, MaxNumberOfMessages: 10, VisibilityTimeout: 43_200 }));
      if (Messages.length === 0) break;
      for (const m of Messages) seen.add(m.Body!);
    }
    after.destroy();
    expect([...sent].filter((b) => !seen.has(b))).toEqual([]);
    expect(seen.has("intruder")).toBe(false);
    const reader = new Sluice({ url: second.url, token });
    for (const id of submitted) expect((await reader.jobs.get(id)).id).toBe(id);

    second.child.kill("SIGTERM");
    await second.exited;
    const printed = first.stdout() + first.stderr() + second.stdout() + second.stderr();
    for (const secret of [secretAccessKey, token, "wrong-secret-0123456789abcdef", "not-the-token-0123456789"]) expect(printed).not.toContain(secret);
  }, 120_000);
});
