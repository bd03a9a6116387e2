/**
 * Crash safety with real processes: the CLI server is SIGKILLed while sends and deletes are in
 * flight, then restarted on the same data dir. Every acknowledged send that wasn't
 * acknowledged-deleted must be receivable; no acknowledged delete may come back. A SIGTERM
 * shuts down gracefully with exit code 0 and keeps every message.
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type CliServer, killAllChildren, spawnCli } from "../support/cli.js";
import { sqsV3 } from "../support/clients.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor, within } from "../support/wait.js";

const clients: SQSClient[] = [];
function clientFor(server: CliServer): SQSClient {
  const c = sqsV3(server.url);
  clients.push(c);
  return c;
}

afterEach(async () => {
  await killAllChildren();
  for (const c of clients.splice(0)) c.destroy();
});
afterAll(removeTempDirs);

const queueName = "crash-test";
/**
 * Visibility for the receive+delete phases: long enough that a delete always lands before the
 * message could be received again (a stale-handle delete "succeeds" without deleting, which would
 * look like a resurrection), short enough that un-deleted messages reappear soon after restart.
 */
const leaseSeconds = 5;

async function queueCounts(c: SQSClient, queueUrl: string): Promise<{ visible: number; notVisible: number; delayed: number }> {
  const res = await c.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"],
    }),
  );
  const a = res.Attributes!;
  return { visible: Number(a.ApproximateNumberOfMessages), notVisible: Number(a.ApproximateNumberOfMessagesNotVisible), delayed: Number(a.ApproximateNumberOfMessagesDelayed) };
}

/**
 * Receives everything in the queue with a 12 h visibility, until every body in `mustFind` has
 * been seen and nothing is left visible, delayed, or in flight for someone else — or until the
 * (bounded) time runs out, in which case the caller's assertions say what is missing.
 */
async function drain(
  c: SQSClient,
  queueUrl: string,
  mustFind: Set<string>,
  timeoutMs: number,
): Promise<{ seen: string[]; counts: { visible: number; notVisible: number; delayed: number } }> {
  const seen: string[] = [];
  let counts = { visible: -1, notVisible: -1, delayed: -1 };
  try {
    await waitFor(
      async () => {
        for (;;) {
          const res = await c.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 43_200, WaitTimeSeconds: 0 }));
          const batch = res.Messages ?? [];
          for (const m of batch) seen.push(m.Body!);
          if (batch.length === 0) break;
        }
        counts = await queueCounts(c, queueUrl);
        const found = new Set(seen);
        if (![...mustFind].every((b) => found.has(b))) return false;
        // Everything still hidden is what this drain holds: nothing left to come back later.
        return counts.visible === 0 && counts.delayed === 0 && counts.notVisible === seen.length;
      },
      { timeoutMs, intervalMs: 100, what: "the queue to drain" },
    );
  } catch {
    // fall through: the assertions on `seen` and `counts` report what went wrong
  }
  return { seen, counts };
}

describe("kill -9", () => {
  it("loses no acknowledged send and resurrects no acknowledged delete", async () => {
    const dataDir = await makeTempDir("sluice-crash-");
    const first = await spawnCli({ dataDir });
    const c = clientFor(first);
    const queueUrl = (await c.send(new CreateQueueCommand({ QueueName: queueName }))).QueueUrl!;

    const attempted = new Set<string>();
    const ackedSends = new Set<string>();
    const ackedDeletes = new Set<string>();
    /** Bodies a delete was sent for; a delete in flight at the kill may or may not have happened. */
    const deleteAttempted = new Set<string>();

    // Phase 1: 500 acknowledged sends — 40 batches of 10 and 100 singles, interleaved.
    let n = 0;
    for (let round = 0; round < 20; round++) {
      for (let b = 0; b < 2; b++) {
        const entries = Array.from({ length: 10 }, (_, i) => ({ Id: `e${i}`, MessageBody: `p1-${n + i}` }));
        n += 10;
        entries.forEach((e) => attempted.add(e.MessageBody));
        const res = await c.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
        expect(res.Failed ?? []).toEqual([]);
        for (const ok of res.Successful!) ackedSends.add(entries[Number(ok.Id!.slice(1))]!.MessageBody);
      }
      for (let s = 0; s < 5; s++) {
        const body = `p1-${n++}`;
        attempted.add(body);
        await c.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
        ackedSends.add(body);
      }
    }
    expect(ackedSends.size).toBe(500);

    // Phase 2: receive and delete about 150, singles and batches; leave some received but not deleted.
    for (let i = 0; i < 20; i++) {
      const res = await c.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: leaseSeconds }));
      const msgs = res.Messages ?? [];
      expect(msgs.length).toBeGreaterThan(0);
      if (i % 4 === 3) continue; // received, not deleted: must survive the crash
      msgs.forEach((m) => deleteAttempted.add(m.Body!));
      if (i % 2 === 0) {
        const del = await c.send(
          new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: msgs.map((m, k) => ({ Id: `d${k}`, ReceiptHandle: m.ReceiptHandle! })) }),
        );
        expect(del.Failed ?? []).toEqual([]);
        for (const ok of del.Successful!) ackedDeletes.add(msgs[Number(ok.Id!.slice(1))]!.Body!);
      } else {
        for (const m of msgs) {
          await c.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle! }));
          ackedDeletes.add(m.Body!);
        }
      }
    }
    expect(ackedDeletes.size).toBeGreaterThanOrEqual(100);

    // Phase 3: streams of sends and of receive+delete in flight when the process is killed.
    let stopStreams = false;
    let streamSeq = 0;
    const sender = async (): Promise<void> => {
      while (!stopStreams) {
        const batch = streamSeq % 3 === 0;
        const bodies = batch ? Array.from({ length: 10 }, () => `p3-${streamSeq++}`) : [`p3-${streamSeq++}`];
        bodies.forEach((b) => attempted.add(b));
        try {
          if (batch) {
            const entries = bodies.map((b, i) => ({ Id: `s${i}`, MessageBody: b }));
            const res = await c.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
            for (const ok of res.Successful ?? []) ackedSends.add(entries[Number(ok.Id!.slice(1))]!.MessageBody);
          } else {
            await c.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: bodies[0]! }));
            ackedSends.add(bodies[0]!);
          }
        } catch {
          return; // the server is gone: this send was never acknowledged
        }
      }
    };
    const deleter = async (): Promise<void> => {
      while (!stopStreams) {
        try {
          const res = await c.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 5, VisibilityTimeout: leaseSeconds }));
          const msgs = res.Messages ?? [];
          if (msgs.length === 0) continue;
          msgs.forEach((m) => deleteAttempted.add(m.Body!));
          const del = await c.send(
            new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: msgs.map((m, k) => ({ Id: `d${k}`, ReceiptHandle: m.ReceiptHandle! })) }),
          );
          for (const ok of del.Successful ?? []) ackedDeletes.add(msgs[Number(ok.Id!.slice(1))]!.Body!);
        } catch {
          return;
        }
      }
    };
    const sendsBeforeStream = ackedSends.size;
    const deletesBeforeStream = ackedDeletes.size;
    const streams = [sender(), sender(), sender(), deleter(), deleter()];
    await waitFor(() => ackedSends.size >= sendsBeforeStream + 200 && ackedDeletes.size >= deletesBeforeStream + 20, {
      timeoutMs: 30_000,
      what: "the streams to make progress",
    });
    process.kill(first.pid, "SIGKILL");
    const exit = await within(10_000, first.exited, "the killed process to exit");
    expect(exit.signal).toBe("SIGKILL");
    stopStreams = true;
    await within(10_000, Promise.all(streams), "the client streams to notice the crash");
    // Each sender had a request in flight at the kill: those were attempted but never acknowledged.
    expect(attempted.size).toBeGreaterThan(ackedSends.size);

    // Every acknowledged send must be back, except those a delete was sent for: acknowledged
    // deletes must not come back, and unacknowledged ones (in flight at the kill) may go either way.
    const mustFind = new Set([...ackedSends].filter((b) => !deleteAttempted.has(b)));
    expect(deleteAttempted.size - ackedDeletes.size).toBeLessThanOrEqual(10); // at most the two deleters' in-flight batches
    expect(mustFind.size).toBeGreaterThan(300);

    // Restart on the same data dir.
    const second = await spawnCli({ dataDir });
    const c2 = clientFor(second);
    const queueUrl2 = (await c2.send(new GetQueueUrlCommand({ QueueName: queueName }))).QueueUrl!;
    expect(queueUrl2).toBe(`${second.url}/000000000000/${queueName}`);
    const { seen, counts } = await drain(c2, queueUrl2, mustFind, 30_000);

    const seenSet = new Set(seen);
    const lost = [...mustFind].filter((b) => !seenSet.has(b));
    const resurrected = seen.filter((b) => ackedDeletes.has(b));
    const unknown = seen.filter((b) => !attempted.has(b));
    const duplicated = seen.filter((b, i) => seen.indexOf(b) !== i);
    expect({ lost, resurrected, unknown, duplicated }).toEqual({ lost: [], resurrected: [], unknown: [], duplicated: [] });
    expect(counts).toEqual({ visible: 0, notVisible: seen.length, delayed: 0 });

    second.child.kill("SIGTERM");
    expect(await within(15_000, second.exited, "graceful exit")).toEqual({ code: 0, signal: null });
  });
});

describe("SIGTERM", () => {
  it("exits with code 0, releases a pending long poll, and keeps every message", async () => {
    const dataDir = await makeTempDir("sluice-term-");
    const first = await spawnCli({ dataDir });
    const c = clientFor(first);
    const queueUrl = (await c.send(new CreateQueueCommand({ QueueName: "term-test" }))).QueueUrl!;
    const pollQueueUrl = (await c.send(new CreateQueueCommand({ QueueName: "term-poll" }))).QueueUrl!;
    const bodies = Array.from({ length: 25 }, (_, i) => `t-${i}`);
    for (let i = 0; i < bodies.length; i += 5) {
      const entries = bodies.slice(i, i + 5).map((b, k) => ({ Id: `e${k}`, MessageBody: b }));
      const res = await c.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      expect(res.Successful).toHaveLength(5);
    }
    // A long poll that is still held when SIGTERM arrives must not keep the process alive.
    const pollClient = sqsV3(first.url);
    clients.push(pollClient);
    const poll = pollClient.send(new ReceiveMessageCommand({ QueueUrl: pollQueueUrl, WaitTimeSeconds: 20 })).then(
      (r) => ({ ok: true as const, messages: r.Messages ?? [] }),
      (e: unknown) => ({ ok: false as const, error: e }),
    );
    // Let the poll reach the server before the signal: round trips issued after it. (Once it has
    // arrived, graceful shutdown must answer it, whether or not it is already waiting.)
    for (let i = 0; i < 3; i++) await c.send(new GetQueueAttributesCommand({ QueueUrl: pollQueueUrl, AttributeNames: ["All"] }));

    process.kill(first.pid, "SIGTERM");
    expect(await within(10_000, first.exited, "graceful exit after SIGTERM")).toEqual({ code: 0, signal: null });
    // Answered before the process exited (or failed if it wasn't): only the client's own handling is
    // left, so any bound far below the poll's 20 s wait tells the two apart, even on a slow machine.
    const pollResult = await within(5_000, poll, "the long poll held at shutdown");
    expect(pollResult).toEqual({ ok: true, messages: [] });

    const second = await spawnCli({ dataDir });
    const c2 = clientFor(second);
    const url2 = (await c2.send(new GetQueueUrlCommand({ QueueName: "term-test" }))).QueueUrl!;
    const { seen, counts } = await drain(c2, url2, new Set(bodies), 10_000);
    expect(seen.sort()).toEqual([...bodies].sort());
    expect(counts).toEqual({ visible: 0, notVisible: bodies.length, delayed: 0 });
    second.child.kill("SIGTERM");
    expect(await within(10_000, second.exited, "second graceful exit")).toEqual({ code: 0, signal: null });
  });
});
