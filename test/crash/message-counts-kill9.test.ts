/**
 * The kept message counts across a real kill -9: senders, receivers and deleters run against a
 * CLI server that is SIGKILLed mid-traffic. Each queue's count and bytes are moved in the
 * transaction of every change to its messages (kept-counts.ts), so the file, opened as the crash
 * left it, holds each queue's true number of messages and bytes, and the restarted server's
 * GetQueueAttributes adds up to the number exactly.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { sqsOk } from "../support/sqs-json.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

afterEach(killAllChildren);
afterAll(removeTempDirs);

/** Per queue name: [kept count, actual count, kept bytes, actual bytes], as the file holds them. */
function countsInFile(dataDir: string): Record<string, [number, number, number, number]> {
  const db = new Database(join(dataDir, "sluice.db"), { readonly: true });
  try {
    const rows = db
      .prepare<[], { name: string; kept: number; actual: number; keptBytes: number; actualBytes: number }>(
        `SELECT q.name, c.messages AS kept, (SELECT count(*) FROM messages m WHERE m.queue_id = q.id) AS actual,
           c.bytes AS keptBytes, (SELECT coalesce(sum(coalesce(body_bytes, octet_length(body))), 0) FROM messages m WHERE m.queue_id = q.id) AS actualBytes
         FROM queues q JOIN queue_message_counts c ON c.queue_id = q.id`,
      )
      .all();
    return Object.fromEntries(rows.map((r) => [r.name, [r.kept, r.actual, r.keptBytes, r.actualBytes]]));
  } finally {
    db.close();
  }
}

describe("message counts across kill -9 (SQLite)", () => {
  it("are exact in the file the crash left, and GetQueueAttributes adds up to them after the restart", async () => {
    const dataDir = await makeTempDir("sluice-counts-kill9-");
    const first = await spawnCli({ dataDir });
    const urls = await Promise.all(["a", "b"].map(async (name) => (await sqsOk(first.url, "CreateQueue", { QueueName: name })).QueueUrl as string));

    let sent = 0;
    let killed = false;
    const sender = async (queueUrl: string): Promise<void> => {
      for (let n = 0; !killed; n++) {
        try {
          await sqsOk(first.url, "SendMessageBatch", { QueueUrl: queueUrl, Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `e${i}`, MessageBody: `m${n}.${i}` })) });
          sent += 10;
        } catch {
          return; // the kill
        }
      }
    };
    // Takes messages and deletes most of them; the rest stay in flight.
    const consumer = async (queueUrl: string): Promise<void> => {
      while (!killed) {
        try {
          const got = ((await sqsOk(first.url, "ReceiveMessage", { QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 600 })).Messages ?? []) as Array<{ ReceiptHandle: string }>;
          const entries = got.slice(0, 7).map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle }));
          if (entries.length > 0) await sqsOk(first.url, "DeleteMessageBatch", { QueueUrl: queueUrl, Entries: entries });
        } catch {
          return;
        }
      }
    };
    const traffic = urls.flatMap((u) => [sender(u), sender(u), consumer(u)]);
    await waitFor(() => sent >= 2_000, { what: "2,000 messages acknowledged before the kill", timeoutMs: 60_000 });
    process.kill(first.pid, "SIGKILL");
    killed = true;
    await first.exited;
    await Promise.all(traffic);

    const atKill = countsInFile(dataDir);
    expect(Object.keys(atKill).sort()).toEqual(["a", "b"]);
    for (const [name, [kept, actual, keptBytes, actualBytes]] of Object.entries(atKill)) {
      expect(kept, `queue ${name}'s kept count`).toBe(actual);
      expect(keptBytes, `queue ${name}'s kept bytes`).toBe(actualBytes);
      expect(actualBytes).toBeGreaterThan(0);
    }

    const second = await spawnCli({ dataDir, port: first.port });
    for (const [i, name] of ["a", "b"].entries()) {
      const { Attributes } = (await sqsOk(second.url, "GetQueueAttributes", {
        QueueUrl: urls[i]!,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"],
      })) as { Attributes: Record<string, string> };
      const total = Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible) + Number(Attributes.ApproximateNumberOfMessagesDelayed);
      expect(total, `queue ${name}: visible + in flight + delayed`).toBe(atKill[name]![1]);
      expect(Number(Attributes.ApproximateNumberOfMessagesNotVisible)).toBeGreaterThan(0);
    }
    process.kill(second.pid, "SIGKILL");
    await second.exited;
    console.log(`message counts across kill -9: ${sent} messages acknowledged; at the kill a ${atKill.a![0]} / b ${atKill.b![0]} kept, each equal to the rows`);
  });
});
