/**
 * Live jobs ended by their queue rather than by a worker — an SQS PurgeQueue, retention run by
 * the server's maintenance loop, or an SQS DeleteQueue that deletes them — over HTTP on a real
 * server (manual clock): held requests are answered and event streams hear of it at once, as for
 * any other end of a job.
 */
import { CreateQueueCommand, DeleteQueueCommand, GetQueueUrlCommand, PurgeQueueCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FetchLike, Sluice, SluiceApiError } from "../../client/src/index.js";
import { sqsV3 } from "../support/clients.js";
import { waitFor, within } from "../support/wait.js";
import { type JobsServer, openEventStream, startJobsServer } from "./http-harness.js";

let s: JobsServer;
let sqs: SQSClient;
/** The server's own subscribers (the webhook dispatcher listens to everything). */
let ownSubscribers: number;
beforeEach(async () => {
  s = await startJobsServer();
  sqs = sqsV3(s.url);
  ownSubscribers = s.server.jobs.subscriberCount();
});
afterEach(async () => {
  sqs.destroy();
  await s.stop();
});

/** Resolves once `n` streams and held requests have subscribed to the server's job events. */
async function subscribers(n: number): Promise<void> {
  await waitFor(() => s.server.jobs.subscriberCount() === ownSubscribers + n, { what: `${n} job event subscribers` });
}

describe("jobs ended by their queue", () => {
  it("an SQS PurgeQueue answers a held GET ?wait and a held submit at once, and SSE streams show job.canceled", async () => {
    const job = (await s.api("POST", "/v1/queues/q/jobs", { input: 1 })).body.job;
    const jobStream = await openEventStream(`${s.url}/v1/jobs/${job.id}/events`);
    expect((await within(5_000, jobStream.next()))?.event).toBe("job.snapshot");
    const all = await openEventStream(`${s.url}/v1/events?queue=q`);
    const waiting = s.api("GET", `/v1/jobs/${job.id}?wait=30`);
    const held = s.api("POST", "/v1/queues/q/jobs?wait=30", { input: 2 });
    await subscribers(4);
    const queued = await within(5_000, all.next());
    expect(queued).toMatchObject({ event: "job.queued", data: { job: { input: 2 } } });

    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: "q" }));
    await sqs.send(new PurgeQueueCommand({ QueueUrl }));
    // The clock never moves: the holds' 30 s limits can't answer them, only the purge can.
    const [waited, submitted] = await within(5_000, Promise.all([waiting, held]), "the held requests");
    expect(waited.body.job).toMatchObject({ id: job.id, status: "canceled", error: { type: "QueuePurged" } });
    expect([submitted.status, submitted.body.job]).toMatchObject([201, { id: queued!.data.job.id, status: "canceled", error: { type: "QueuePurged" } }]);

    expect(await within(5_000, jobStream.next())).toMatchObject({ event: "job.canceled", data: { job: { id: job.id, status: "canceled" } } });
    expect(await within(5_000, jobStream.next())).toBeUndefined(); // a job's stream ends with the job
    const ended = [(await within(5_000, all.next()))!, (await within(5_000, all.next()))!];
    expect(ended.map((e) => [e.event, e.data.job.id]).sort()).toEqual(
      [
        ["job.canceled", job.id],
        ["job.canceled", queued!.data.job.id],
      ].sort(),
    );
  });

  it("retention, run by the maintenance loop, answers a held GET ?wait at once and the job's stream shows job.failed", async () => {
    await sqs.send(new CreateQueueCommand({ QueueName: "short", Attributes: { MessageRetentionPeriod: "60" } }));
    const job = (await s.api("POST", "/v1/queues/short/jobs", { input: 1 })).body.job;
    const stream = await openEventStream(`${s.url}/v1/jobs/${job.id}/events`);
    expect((await within(5_000, stream.next()))?.event).toBe("job.snapshot");
    s.clock.advance(59_000);
    let answered = false;
    const waiting = s.api("GET", `/v1/jobs/${job.id}?wait=30`).finally(() => (answered = true));
    await subscribers(2);
    const heldAtMs = s.clock.nowMs();
    // Maintenance deletes expired messages every 5 s of clock time: step the clock a second at a
    // time (each pass finishing between steps) until the hold is answered — never as far as the
    // hold's own 30 s limit, so only the expiry can answer it.
    await waitFor(
      () => {
        if (!answered && s.clock.nowMs() - heldAtMs < 25_000) s.clock.advance(1_000);
        return answered;
      },
      { intervalMs: 20, what: "the held GET to be answered" },
    );
    expect((await waiting).body.job).toMatchObject({ id: job.id, status: "failed", error: { type: "MessageExpired" } });
    expect(await within(5_000, stream.next())).toMatchObject({ event: "job.failed", data: { job: { id: job.id, error: { type: "MessageExpired" } } } });
    expect(await within(5_000, stream.next())).toBeUndefined();
  });

  it("an SQS DeleteQueue answers a held GET ?wait, a held submit and the SDK's run() with 404 JobNotFound at once, and ends the job's SSE stream", async () => {
    const job = (await s.api("POST", "/v1/queues/q/jobs", { input: 1 })).body.job;
    const baseTimers = s.clock.pendingTimers();
    const stream = await openEventStream(`${s.url}/v1/jobs/${job.id}/events`);
    expect((await within(5_000, stream.next()))?.event).toBe("job.snapshot");
    const waiting = s.api("GET", `/v1/jobs/${job.id}?wait=30`);
    const held = s.api("POST", "/v1/queues/q/jobs?wait=30", { input: 2 });
    const run = new Sluice({ url: s.url }).queue("q").run(3).catch((err: unknown) => err);
    await subscribers(4);

    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: "q" }));
    await sqs.send(new DeleteQueueCommand({ QueueUrl }));
    // The clock never moves: the holds' limits can't answer them, only the delete can — with the
    // answer a hold gives when its limit passes and the job is gone.
    const [waited, submitted, ran] = await within(5_000, Promise.all([waiting, held, run]), "the held requests");
    for (const answer of [waited, submitted]) expect([answer.status, answer.body.error?.code]).toEqual([404, "JobNotFound"]);
    expect(ran).toBeInstanceOf(SluiceApiError);
    expect(ran).toMatchObject({ status: 404, code: "JobNotFound" });
    // The job's stream ends without an event (there was no transition); reconnecting is a 404.
    expect(await within(5_000, stream.next())).toBeUndefined();
    expect((await s.api("GET", `/v1/jobs/${job.id}/events`)).status).toBe(404);
    // Nothing left holding on: every subscription is gone, and so is every hold's timer.
    await subscribers(0);
    expect(s.clock.pendingTimers()).toBe(baseTimers);
  });

  it("an SQS DeleteQueue answers long polls on the queue at once, with nothing: a ReceiveMessage and a worker's lease", async () => {
    await s.api("PUT", "/v1/queues/lp", {});
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: "lp" }));
    const queueId = (await s.server.queues.getQueue("", "lp")).id;
    const received = sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20, MaxNumberOfMessages: 10 }));
    const leased = s.api("POST", "/v1/queues/lp/leases", { max: 5, waitSeconds: 20 });
    await waitFor(() => s.server.queues.waiters.waiterCount(queueId) === 2, { what: "the receive and the lease to wait" });

    await sqs.send(new DeleteQueueCommand({ QueueUrl }));
    // The clock never moves: only the delete can end them.
    const [receive, lease] = await within(5_000, Promise.all([received, leased]), "the long polls");
    expect(receive.Messages ?? []).toEqual([]);
    expect([lease.status, lease.body.jobs]).toEqual([200, []]);
    expect(s.server.queues.waiters.waiterCount(queueId)).toBe(0);
  });

  it("after an SQS DeleteQueue a worker's next lease answers 409 QueueDeletedRecently, as a submit does — an SDK worker backs off rather than re-polling in a tight loop", async () => {
    await s.api("PUT", "/v1/queues/lp", {});
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: "lp" }));
    const queueId = (await s.server.queues.getQueue("", "lp")).id;
    let leaseRequests = 0;
    const counting: FetchLike = (input, init) => {
      if (input.endsWith("/v1/queues/lp/leases")) leaseRequests++;
      return fetch(input, init);
    };
    const errors: unknown[] = [];
    const worker = new Sluice({ url: s.url, fetch: counting }).queue("lp").work(async () => "ok", { concurrency: 4, onError: (err) => errors.push(err) });
    try {
      await waitFor(() => s.server.queues.waiters.waiterCount(queueId) === 1, { what: "the worker's long poll to wait" });
      await sqs.send(new DeleteQueueCommand({ QueueUrl }));
      // The clock never moves: the server's cached queue record would stand for the deleted queue
      // for ever, and each lease on it end at once (the queue is gone) with nothing.
      await waitFor(() => errors.length > 0 || leaseRequests > 50, { what: "the worker to hear of the deletion" });
      expect(errors[0]).toMatchObject({ status: 409, code: "QueueDeletedRecently" });
      expect(leaseRequests).toBeLessThanOrEqual(3);
      expect((await s.api("POST", "/v1/queues/lp/leases", { max: 1, waitSeconds: 20 })).body.error?.code).toBe("QueueDeletedRecently");
    } finally {
      await within(5_000, worker.close(), "worker close");
    }
  });
});
