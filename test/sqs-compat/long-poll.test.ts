/**
 * Long polling: a held ReceiveMessage is answered by the send itself (not a timer loop), an
 * empty poll ends when its wait passes (ManualClock, no 20 s sleep), a delayed message wakes a
 * poll when its delay ends, and server shutdown releases pending polls at once.
 */
import { CreateQueueCommand, ReceiveMessageCommand, type ReceiveMessageCommandOutput, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { sqsV3 } from "../support/clients.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { waitFor, within } from "../support/wait.js";

const clients: SQSClient[] = [];
function client(server: TestServer): SQSClient {
  const c = sqsV3(server.url);
  clients.push(c);
  return c;
}

afterEach(async () => {
  // Clients first: a server's close may wait for their keep-alive sockets.
  for (const c of clients.splice(0)) c.destroy();
  await stopAllServers();
});
afterAll(removeTempDirs);

async function createQueue(server: TestServer, name: string, attributes?: Record<string, string>): Promise<string> {
  const res = await client(server).send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  return res.QueueUrl!;
}

/** Waits (bounded) until the server holds `n` long polls. */
async function pollsHeld(server: TestServer, n: number): Promise<void> {
  await waitFor(() => server.queues.waiters.waiterCount() === n, { timeoutMs: 5_000, what: `${n} long poll(s) held by the server` });
}

/** Tracks whether a receive has settled. */
function track(p: Promise<ReceiveMessageCommandOutput>): { promise: Promise<ReceiveMessageCommandOutput>; settled: boolean } {
  const t: { promise: Promise<ReceiveMessageCommandOutput>; settled: boolean } = { promise: p, settled: false };
  t.promise = p.finally(() => {
    t.settled = true;
  });
  return t;
}

describe("long polling", () => {
  it("a 20 s long poll is answered by another client's acknowledged send itself, with the server's clock standing still", async () => {
    // The server's clock never moves here, so no timer of its own (a re-check loop, the poll's
    // 20 s limit) can answer the poll: only the send can. How fast that is, is the bench's job
    // (its latency columns), not a timed assertion that a loaded CI machine could miss.
    const clock = new ManualClock();
    const startMs = clock.nowMs();
    const server = await startTestServer({ clock });
    const url = await createQueue(server, "lp-wake");
    const receiver = client(server);
    const sender = client(server);
    for (let round = 0; round < 3; round++) {
      const poll = track(receiver.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20, VisibilityTimeout: 600 })));
      await pollsHeld(server, 1);
      expect(poll.settled).toBe(false);
      const sent = await sender.send(new SendMessageCommand({ QueueUrl: url, MessageBody: `wake-${round}` }));
      const res = await within(5_000, poll.promise, "the long poll woken by the send");
      expect(res.Messages?.map((m) => m.MessageId)).toEqual([sent.MessageId]);
    }
    expect(clock.nowMs()).toBe(startMs);
  });

  it("one message wakes one of two pollers; the other keeps waiting for the next", async () => {
    const server = await startTestServer();
    const url = await createQueue(server, "lp-two");
    const a = track(client(server).send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20, VisibilityTimeout: 600 })));
    const b = track(client(server).send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20, VisibilityTimeout: 600 })));
    await pollsHeld(server, 2);
    const sender = client(server);
    await sender.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "first" }));
    await waitFor(() => a.settled || b.settled, { timeoutMs: 5_000, what: "one poller to be answered" });
    const [winner, waiting] = a.settled ? [a, b] : [b, a];
    expect((await winner.promise).Messages?.map((m) => m.Body)).toEqual(["first"]);
    await pollsHeld(server, 1);
    expect(waiting.settled).toBe(false);
    await sender.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "second" }));
    expect((await within(5_000, waiting.promise, "the second poller")).Messages?.map((m) => m.Body)).toEqual(["second"]);
  });

  it("an empty long poll returns empty when its wait passes (ManualClock, no wall-time wait)", async () => {
    const clock = new ManualClock();
    const server = await startTestServer({ clock });
    const url = await createQueue(server, "lp-empty");
    const c = client(server);
    const poll = track(c.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 })));
    await pollsHeld(server, 1);
    clock.advance(19_999);
    // A round trip through the server orders us after anything the advance triggered.
    await c.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0 }));
    expect(poll.settled).toBe(false);
    clock.advance(1);
    const res = await within(5_000, poll.promise, "the long poll after its wait");
    expect(res.Messages ?? []).toEqual([]);
    expect(server.queues.waiters.waiterCount()).toBe(0);
  });

  it("a queue's ReceiveMessageWaitTimeSeconds makes a plain receive a long poll", async () => {
    const clock = new ManualClock();
    const server = await startTestServer({ clock });
    const url = await createQueue(server, "lp-queue-wait", { ReceiveMessageWaitTimeSeconds: "5" });
    const c = client(server);
    const poll = track(c.send(new ReceiveMessageCommand({ QueueUrl: url })));
    await pollsHeld(server, 1);
    clock.advance(4_999);
    await c.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0 }));
    expect(poll.settled).toBe(false);
    clock.advance(1);
    expect((await within(5_000, poll.promise, "the queue-default long poll")).Messages ?? []).toEqual([]);
  });

  it("a delayed message wakes a long poll when its delay ends", async () => {
    const clock = new ManualClock();
    const server = await startTestServer({ clock });
    const url = await createQueue(server, "lp-delay");
    const c = client(server);
    const sent = await c.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "later", DelaySeconds: 5 }));
    const poll = track(c.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 })));
    await pollsHeld(server, 1);
    clock.advance(4_999);
    await c.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0 }));
    expect(poll.settled).toBe(false);
    clock.advance(1);
    const res = await within(5_000, poll.promise, "the long poll woken by the delay's end");
    expect(res.Messages?.map((m) => m.MessageId)).toEqual([sent.MessageId]);
  });

  it("a client that abandons its long poll frees the server's waiter at once", async () => {
    const server = await startTestServer();
    const url = await createQueue(server, "lp-abandon");
    const abort = new AbortController();
    const poll = client(server)
      .send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 }), { abortSignal: abort.signal })
      .then(
        () => "resolved",
        (e: unknown) => (e as Error).name,
      );
    await pollsHeld(server, 1);
    abort.abort();
    expect(await within(2_000, poll, "the aborted poll")).toBe("AbortError");
    await waitFor(() => server.queues.waiters.waiterCount() === 0, { timeoutMs: 2_000, what: "the server to drop the abandoned poll" });
    // A message sent now is not swallowed by the abandoned poll: it is still there to receive.
    const sent = await client(server).send(new SendMessageCommand({ QueueUrl: url, MessageBody: "not lost" }));
    const res = await client(server).send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0 }));
    expect(res.Messages?.map((m) => m.MessageId)).toEqual([sent.MessageId]);
  });

  it("closing the server releases a pending long poll with an empty result, not at its 20 s limit", async () => {
    // The server's clock stands still, so the poll's own limit can't be what answers it: close() must.
    const server = await startTestServer({ clock: new ManualClock() });
    const url = await createQueue(server, "lp-close");
    const poll = track(client(server).send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 })));
    await pollsHeld(server, 1);
    const closed = server.stop();
    const res = await within(5_000, poll.promise, "the long poll after close()");
    expect(res.Messages ?? []).toEqual([]);
    await within(5_000, closed, "server close");
  });
});
