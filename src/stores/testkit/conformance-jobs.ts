/**
 * Conformance cases for the jobs half of the Store (core/job-store.ts): every store applies
 * core's transitions to the job row, its message and the webhook outbox in one write.
 */
import { expect } from "vitest";
import { jobMessage } from "../../core/jobs/job-message.js";
import { defaultJobQueueSettings } from "../../core/job-settings.js";
import type { JobWebhook } from "../../core/job.js";
import type { ConformanceContext } from "./conformance-context.js";
import { T0, act } from "./conformance-context.js";
import { expectCode, jobCaseKit, newJobFor } from "./conformance-jobs-kit.js";
import { messageReceive, messageSend } from "./one-call.js";

export { newJobFor } from "./conformance-jobs-kit.js";

export function registerJobCases({ store, reopen, test }: ConformanceContext): void {
  const { makeQueue, submit, policy, leaseParams, lease } = jobCaseKit(store);

  test("jobs: create writes the job and its message together; get and list read them back", async () => {
    const q = await makeQueue();
    const created = await submit(q, { metadataJson: '{"k":"v"}' });
    expect(created.created).toBe(true);
    const got = await store().jobGet({ id: created.job.id });
    expect(got).toMatchObject({ id: created.job.id, status: "queued", inputJson: created.job.inputJson, metadataJson: '{"k":"v"}', messageSeq: created.job.messageSeq });
    expect((await store().queueStats({ queueId: q.id, nowMs: T0, minSentAtMs: 0 })).visible).toBe(1);
    const second = await submit(q);
    expect((await store().jobList({ queueId: q.id, limit: 10 })).map((j) => j.id)).toEqual([second.job.id, created.job.id]);
    expect((await store().jobList({ queueId: q.id, beforeSeq: second.job.seq, limit: 10 })).map((j) => j.id)).toEqual([created.job.id]);
    expect(await store().jobCountByStatus({ queueId: q.id })).toEqual({ waiting: 0, queued: 2, running: 0, succeeded: 0, failed: 0, canceled: 0 });
  });

  test("jobs: an idempotency claim returns the claimed job until it expires", async () => {
    const q = await makeQueue();
    const first = await submit(q, {}, { key: "k", fingerprint: "f1", expiresAtMs: T0 + 1000 });
    const again = await submit(q, {}, { key: "k", fingerprint: "f2", expiresAtMs: T0 + 1000 });
    expect(again).toMatchObject({ created: false, fingerprint: "f1", job: { id: first.job.id } });
    expect((await store().jobList({ queueId: q.id, limit: 10 })).length).toBe(1); // nothing else was written
  });

  test("jobs: lease takes ready messages by priority, runs their jobs, and hides the messages", async () => {
    const q = await makeQueue();
    const low = await submit(q, { priority: 1 });
    const high = await submit(q, { priority: 7 });
    const r = await lease(q, { token: `${q.id}.tok-aaaaaaaa` });
    expect(r.leased.map((j) => [j.id, j.status, j.attempt, j.leaseToken, j.leaseExpiresAtMs])).toEqual([
      [high.job.id, "running", 1, `${q.id}.tok-aaaaaaaa`, T0 + 30_000],
      [low.job.id, "running", 1, `${q.id}.tok-aaaaaaaa`, T0 + 30_000],
    ]);
    expect(r.changes.map((c) => c.events)).toEqual([["job.started"], ["job.started"]]);
    expect((await lease(q)).leased).toEqual([]);
    // The lease expires: the next lease is the next attempt.
    const again = await lease(q, { nowMs: T0 + 30_000, token: `${q.id}.tok-bbbbbbbb` });
    expect(again.leased.map((j) => j.attempt)).toEqual([2, 2]);
  });

  test("jobs: a create may carry a handoff lease, run after the insert in the same write", async () => {
    const q = await makeQueue();
    const older = await submit(q);
    const token = `${q.id}.tok-cccccccc`;
    const r = await submit(q, {}, undefined, leaseParams(q, token));
    const id = r.job.id;
    expect(r.created && r.job.status).toBe("queued");
    // The lease sees the job just inserted, beside the one already waiting, in receive order.
    expect(r.handoff?.leased.map((j) => [j.id, j.status, j.leaseToken])).toEqual([
      [older.job.id, "running", token],
      [id, "running", token],
    ]);
    expect(await store().jobGet({ id })).toMatchObject({ status: "running", attempt: 1, leaseToken: token });
  });

  test("jobs: a create runs its handoff only when it creates a job", async () => {
    const q = await makeQueue();
    const claim = { key: "k", fingerprint: "f", expiresAtMs: T0 + 1000 };
    const first = await submit(q, {}, claim, leaseParams(q, `${q.id}.tok-dddddddd`));
    expect(first.handoff?.leased.map((j) => j.id)).toEqual([first.job.id]);
    // No worker to give it to: the job is created and stays queued.
    const unclaimed = await submit(q);
    expect(unclaimed.handoff).toBeUndefined();
    // A replay writes nothing, so it leases nothing — not even the job that is ready.
    const replay = await submit(q, {}, claim, leaseParams(q, `${q.id}.tok-eeeeeeee`));
    expect(replay).toMatchObject({ created: false, job: { id: first.job.id } });
    expect(replay.handoff).toBeUndefined();
    expect(await store().jobGet({ id: first.job.id })).toMatchObject({ status: "running", leaseToken: `${q.id}.tok-dddddddd` });
    expect(await store().jobGet({ id: unclaimed.job.id })).toMatchObject({ status: "queued" });
  });

  test("jobs: jobCreateMany writes its items in order, a key claimed by an earlier item names that job, and its handoff takes them", async () => {
    const q = await makeQueue();
    const claim = { key: "k-many", fingerprint: "f", expiresAtMs: T0 + 60_000 };
    const a = newJobFor(q, { priority: 1 });
    const b = newJobFor(q, { priority: 1 });
    const c = newJobFor(q);
    const token = `${q.id}.tok-ffffffff`;
    const r = await store().jobCreateMany({
      items: [{ ...a, idempotency: claim }, { ...b, idempotency: claim }, c],
      nowMs: T0,
      handoff: { ...leaseParams(q, token), max: 1 },
    });
    expect(r.results.map((x) => [x.created, x.job.id])).toEqual([
      [true, a.job.id],
      [false, a.job.id],
      [true, c.job.id],
    ]);
    expect(r.results[1]).toMatchObject({ created: false, fingerprint: "f" });
    const [first, , third] = r.results;
    expect(first!.job.seq).toBeLessThan(third!.job.seq);
    // The handoff takes one (max 1), in receive order: priority first.
    expect(r.handoff?.leased.map((j) => [j.id, j.leaseToken])).toEqual([[a.job.id, token]]);
    expect((await store().jobList({ queueId: q.id, limit: 10 })).map((j) => [j.id, j.status])).toEqual([
      [c.job.id, "queued"],
      [a.job.id, "running"],
    ]);
  });

  test("jobs: jobCreateMany naming a deleted queue writes none of its items (QueueNotFound)", async () => {
    const q = await makeQueue();
    const gone = await makeQueue("gone");
    await store().queueDelete({ id: gone.id, nowMs: T0 });
    const ok = newJobFor(q);
    const refused = newJobFor(gone);
    await expectCode(store().jobCreateMany({ items: [{ ...ok, idempotency: { key: "k", fingerprint: "f", expiresAtMs: T0 + 1000 } }, refused], nowMs: T0 }), "QueueNotFound");
    expect(await store().jobGet({ id: ok.job.id })).toBeUndefined();
    expect(await store().jobList({ queueId: q.id, limit: 10 })).toEqual([]);
    // The key was not claimed either: it is free for a job of its own.
    expect((await submit(q, {}, { key: "k", fingerprint: "f2", expiresAtMs: T0 + 1000 })).created).toBe(true);
  });

  test("jobs: a lease applies its acks first, in the same write, each answered on its own", async () => {
    const q = await makeQueue();
    const a = await submit(q);
    const b = await submit(q);
    const token = `${q.id}.tok-aaaaaaaa`;
    await lease(q, { token });
    const c = await submit(q);
    const r = await store().jobLease({
      ...policy(),
      queueId: q.id,
      queueName: q.name,
      max: 10,
      nowMs: T0 + 1,
      leaseSeconds: 30,
      minSentAtMs: 0,
      leaseToken: `${q.id}.tok-bbbbbbbb`,
      adopt: { maxAttempts: 3 },
      acks: [
        { kind: "complete", id: a.job.id, leaseToken: token, outputJson: '"done"', resultTtlSeconds: 60 },
        { kind: "complete", id: a.job.id, leaseToken: token, outputJson: '"again"', resultTtlSeconds: 60 },
        { kind: "complete", id: "nope", leaseToken: token, outputJson: "null", resultTtlSeconds: 60 },
        { kind: "fail", ...policy(), id: b.job.id, leaseToken: token, error: { message: "x" }, retryable: true, retryAfterSeconds: 0 },
      ],
    });
    expect(r.acks.map((x) => (x.ok ? x.change.job.status : x.error.code))).toEqual(["succeeded", "JobAlreadyFinished", "JobNotFound", "queued"]);
    // b, retried with no delay, is leased again by this very request, beside c.
    expect(r.leased.map((j) => j.id).sort()).toEqual([b.job.id, c.job.id].sort());
    expect(await store().jobGet({ id: a.job.id })).toMatchObject({ status: "succeeded", outputJson: '"done"' });
  });

  test("jobs: a lease's acks delete every finished job's message, and the queue's kept counts follow", async () => {
    const q = await makeQueue();
    // More acks than one statement deletes (the SQLite store deletes them 32 at a time).
    const jobs = [];
    for (let i = 0; i < 40; i++) jobs.push((await submit(q)).job);
    const token = `${q.id}.tok-aaaaaaaa`;
    expect((await lease(q, { token, max: 40 })).leased).toHaveLength(40);
    const held = await store().queueHeld({ queueId: q.id });
    expect(held.messages).toBe(40);
    const [retried, ...done] = jobs;
    const r = await store().jobLease({
      ...leaseParams(q, `${q.id}.tok-bbbbbbbb`),
      max: 0,
      nowMs: T0 + 1,
      acks: [
        { kind: "fail", ...policy(), id: retried!.id, leaseToken: token, error: { message: "x" }, retryable: true, retryAfterSeconds: 60 },
        { kind: "complete", id: "nope", leaseToken: token, outputJson: "null", resultTtlSeconds: 60 },
        ...done.map((j) => ({ kind: "complete" as const, id: j.id, leaseToken: token, outputJson: '"ok"', resultTtlSeconds: 60 })),
      ],
    });
    expect(r.acks.filter((a) => a.ok).length).toBe(40);
    // Only the retried job's message is left, hidden while it waits out its delay; its bytes are all that is held.
    expect(await store().queueHeld({ queueId: q.id })).toEqual({ messages: 1, bytes: Buffer.byteLength(retried!.inputJson) });
    const stats = await store().queueStats({ queueId: q.id, nowMs: T0 + 2, minSentAtMs: 0 });
    expect([stats.visible, stats.inFlight + stats.delayed]).toEqual([0, 1]);
    for (const j of done) expect(await store().jobGet({ id: j.id })).toMatchObject({ status: "succeeded", messageSeq: undefined });
  });

  test("jobs: an Idempotency-Key used by two concurrent submits names one job", async () => {
    const q = await makeQueue();
    const claim = { key: "k-1", fingerprint: "f-1", expiresAtMs: T0 + 60_000 };
    const [first, second] = await Promise.all([submit(q, {}, claim), submit(q, {}, claim)]);
    const created = [first, second].filter((r) => r.created);
    expect(created.length).toBe(1);
    const other = created[0] === first ? second : first;
    expect(other).toMatchObject({ created: false, fingerprint: "f-1", job: { id: created[0]!.job.id } });
    expect((await store().jobList({ queueId: q.id, limit: 10 })).map((j) => j.id)).toEqual([created[0]!.job.id]);
  });

  test("jobs: heartbeat, complete and fail check the lease; complete deletes the message", async () => {
    const q = await makeQueue();
    const { job } = await submit(q);
    const token = `${q.id}.tok-aaaaaaaa`;
    await lease(q, { token });
    await expectCode(act(store(), { kind: "heartbeat", id: job.id, leaseToken: `${q.id}.wrong-aaaa`, nowMs: T0 + 1 }), "LeaseMismatch");
    await expectCode(act(store(), { kind: "heartbeat", id: "nope", leaseToken: token, nowMs: T0 + 1 }), "JobNotFound");
    const beat = await act(store(), { kind: "heartbeat", id: job.id, leaseToken: token, nowMs: T0 + 10_000, progress: 0.5 });
    expect(beat).toMatchObject({ events: ["job.progress"], job: { leaseExpiresAtMs: T0 + 40_000, progress: 0.5 } });
    expect((await lease(q, { nowMs: T0 + 35_000 })).leased).toEqual([]); // the message's visibility moved too
    const done = await act(store(), { kind: "complete", id: job.id, leaseToken: token, nowMs: T0 + 20_000, outputJson: '"ok"', resultTtlSeconds: 60 });
    expect(done.job).toMatchObject({ status: "succeeded", outputJson: '"ok"', finishedAtMs: T0 + 20_000, expiresAtMs: T0 + 80_000 });
    expect(await store().queueStats({ queueId: q.id, nowMs: T0 + 100_000, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
  });

  test("jobs: jobTransitionMany applies its actions in order in one call, each answered on its own", async () => {
    const q = await makeQueue();
    const a = await submit(q);
    const b = await submit(q);
    const c = await submit(q);
    const token = `${q.id}.tok-aaaaaaaa`;
    await lease(q, { token, max: 2 });
    const bLeased = await store().jobGet({ id: b.job.id });
    const results = await store().jobTransitionMany({
      nowMs: T0 + 1,
      actions: [
        { kind: "complete", id: a.job.id, leaseToken: token, outputJson: '"a"', resultTtlSeconds: 60 },
        // Refused alone (writes nothing): the lease is not b's, then no such job.
        { kind: "heartbeat", id: b.job.id, leaseToken: `${q.id}.wrong-aaaa` },
        { kind: "cancel", id: "nope", resultTtlSeconds: 60 },
        { kind: "cancel", id: c.job.id, resultTtlSeconds: 60 },
        // An action sees the ones before it: a's lease ended with its completion.
        { kind: "heartbeat", id: a.job.id, leaseToken: token },
      ],
    });
    expect(results.map((r) => (r.ok ? r.change.job.status : r.error.code))).toEqual(["succeeded", "LeaseMismatch", "JobNotFound", "canceled", "JobAlreadyFinished"]);
    expect(await store().jobGet({ id: b.job.id })).toEqual(bLeased);
    expect(await store().jobTransitionMany({ nowMs: T0 + 2, actions: [] })).toEqual([]);
  });

  test("jobs: a retryable failure hides the message for the backoff; a final one moves it to the dead-letter queue", async () => {
    const q = await makeQueue();
    const dlq = await makeQueue("jobs-dlq");
    const { job } = await submit(q, { maxAttempts: 2 });
    await lease(q, { token: `${q.id}.tok-aaaaaaaa` });
    const retry = await act(store(), { kind: "fail", ...policy(dlq), id: job.id, leaseToken: `${q.id}.tok-aaaaaaaa`, nowMs: T0, error: { message: "e1" }, retryable: true });
    expect(retry.job).toMatchObject({ status: "queued", availableAtMs: T0 + 500, error: { message: "e1" } });
    expect((await lease(q, { nowMs: T0 + 499 })).leased).toEqual([]);
    await lease(q, { nowMs: T0 + 500, token: `${q.id}.tok-bbbbbbbb` });
    const failed = await act(store(), { kind: "fail", ...policy(dlq), id: job.id, leaseToken: `${q.id}.tok-bbbbbbbb`, nowMs: T0 + 600, error: { message: "e2", type: "X" }, retryable: true });
    expect(failed).toMatchObject({ events: ["job.failed"], job: { status: "failed", attempt: 2, error: { message: "e2", type: "X" } } });
    const inDlq = await messageReceive(store(), { queueId: dlq.id, max: 10, nowMs: T0 + 600, visibleUntilMs: T0 + 700, minSentAtMs: 0, receiptToken: "tok-dlq-aaaa" });
    expect(inDlq.messages.map((m) => [m.messageId, m.deadLetterSourceQueueName])).toEqual([[job.id, "jobs"]]);
  });

  test("jobs: a final failure whose dead-letter queue was deleted since deletes the message, as without one", async () => {
    const q = await makeQueue();
    const dlq = await makeQueue("jobs-dlq");
    const failing = await submit(q, { maxAttempts: 1 });
    const expiring = await submit(q, { maxAttempts: 1 });
    const token = `${q.id}.tok-aaaaaaaa`;
    await lease(q, { token });
    await store().queueDelete({ id: dlq.id, nowMs: T0 });
    // Core still names the queue (its policy is cached): a fail, and an expired lease's sweep.
    const failed = await act(store(), { kind: "fail", ...policy(dlq), id: failing.job.id, leaseToken: token, nowMs: T0 + 1, error: { message: "e" }, retryable: false });
    const expired = await act(store(), { kind: "expire", ...policy(dlq), id: expiring.job.id, nowMs: T0 + 30_000 });
    for (const change of [failed, expired]) {
      expect(change).toMatchObject({ events: ["job.failed"], job: { status: "failed" } });
      expect(change.job.messageSeq).toBeUndefined();
      expect((await store().jobGet({ id: change.job.id }))!.messageSeq).toBeUndefined();
    }
    expect(await store().queueStats({ queueId: q.id, nowMs: T0 + 60_000, minSentAtMs: 0 })).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  test("jobs: a released lease makes the message visible at once, the attempt given back", async () => {
    const q = await makeQueue();
    const { job } = await submit(q, { maxAttempts: 1 });
    await lease(q, { token: `${q.id}.tok-aaaaaaaa` });
    const released = await act(store(), { kind: "release", id: job.id, leaseToken: `${q.id}.tok-aaaaaaaa`, nowMs: T0 + 5, resultTtlSeconds: 60 });
    expect(released).toMatchObject({ events: ["job.queued"], job: { status: "queued", attempt: 0, availableAtMs: T0 + 5 } });
    expect((await store().jobGet({ id: job.id }))?.leaseExpiresAtMs).toBeUndefined();
    const again = await lease(q, { nowMs: T0 + 5, token: `${q.id}.tok-bbbbbbbb` });
    expect(again.leased).toMatchObject([{ id: job.id, attempt: 1 }]);
  });

  test("jobs: cancel deletes a queued job's message; a stale message of a finished job is dropped by lease", async () => {
    const q = await makeQueue();
    const a = await submit(q);
    expect((await act(store(), { kind: "cancel", id: a.job.id, nowMs: T0, resultTtlSeconds: 60 })).job.status).toBe("canceled");
    expect((await lease(q)).leased).toEqual([]);
    expect(await store().queueStats({ queueId: q.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 0 });
  });

  test("jobs: a purge or retention ends the live jobs of the messages it deletes and returns their changes", async () => {
    const q = await makeQueue();
    const a = await submit(q);
    const b = await submit(q);
    await lease(q, { max: 1 }); // a runs, b stays queued: both end
    const purged = await store().messagePurge({ queueId: q.id, nowMs: T0 + 10 });
    expect(purged?.deleted).toBe(2);
    const ended = purged!.jobChanges.map((c) => [c.job.id, c.job.status, c.job.error?.type, c.job.finishedAtMs, c.events]).sort();
    expect(ended).toEqual([
      [a.job.id, "canceled", "QueuePurged", T0 + 10, ["job.canceled"]],
      [b.job.id, "canceled", "QueuePurged", T0 + 10, ["job.canceled"]],
    ]);
    expect(await store().jobGet({ id: a.job.id })).toMatchObject({ status: "canceled" });

    const old = await makeQueue("retention");
    const c = await submit(old);
    expect(await store().messageExpire({ queueId: old.id, minSentAtMs: T0, nowMs: T0 + 20 })).toEqual({ deleted: 0, jobChanges: [] });
    const expired = await store().messageExpire({ queueId: old.id, minSentAtMs: T0 + 1, nowMs: T0 + 20 });
    expect(expired.deleted).toBe(1);
    // The change as read back (and, from a store that counts a job's changes, with its count).
    expect(expired.jobChanges.map(({ job, events }) => ({ job, events }))).toEqual([{ job: await store().jobGet({ id: c.job.id }), events: ["job.failed"] }]);
    expect(expired.jobChanges[0]!.job).toMatchObject({ status: "failed", error: { type: "MessageExpired" }, finishedAtMs: T0 + 20 });
  });

  test("jobs: queueDelete deletes the queue's jobs and returns the live ones (waiting, queued, running)", async () => {
    const q = await makeQueue();
    const other = await makeQueue("other");
    const running = await submit(q);
    await lease(q, { max: 1 });
    const queued = await submit(q);
    const waiting = await submit(q, { dependsOn: [queued.job.id] });
    const canceled = await submit(q);
    await act(store(), { kind: "cancel", id: canceled.job.id, nowMs: T0, resultTtlSeconds: 60 });
    const elsewhere = await submit(other);
    const deleted = await store().queueDelete({ id: q.id, nowMs: T0 + 1 });
    expect([...deleted.liveJobIds].sort()).toEqual([running.job.id, queued.job.id, waiting.job.id].sort());
    for (const { job } of [running, queued, waiting, canceled]) expect(await store().jobGet({ id: job.id })).toBeUndefined();
    expect(await store().jobGet({ id: elsewhere.job.id })).toMatchObject({ status: "queued" });
    expect(await store().queueDelete({ id: q.id, nowMs: T0 + 2 })).toEqual({ liveJobIds: [] }); // already gone
  });

  test("jobs: lease adopts a message that has no job", async () => {
    const q = await makeQueue();
    const message = jobMessage({ queue: q, jobId: "11111111-1111-4111-8111-111111111111", inputJson: '{"from":"sqs"}', priority: 2, availableAtMs: T0, senderId: "x" });
    await messageSend(store(), { queueId: q.id, messages: [message] });
    const r = await lease(q);
    expect(r.leased.map((j) => [j.id, j.inputJson, j.priority, j.attempt])).toEqual([["11111111-1111-4111-8111-111111111111", '{"from":"sqs"}', 2, 1]]);
  });

  test("jobs: the sweep finds expired leases and timed-out attempts; expire re-checks inside its write", async () => {
    const q = await makeQueue();
    const a = await submit(q);
    const b = await submit(q, { timeoutSeconds: 5 });
    await lease(q, { leaseSeconds: 60 });
    expect(await store().jobListExpired({ nowMs: T0 + 4_999, limit: 10 })).toEqual([]);
    expect(await store().jobListExpired({ nowMs: T0 + 5_000, limit: 10 })).toEqual([{ id: b.job.id, queueName: "jobs" }]);
    const expired = await act(store(), { kind: "expire", ...policy(), id: b.job.id, nowMs: T0 + 5_000 });
    expect(expired).toMatchObject({ events: ["job.retrying"], job: { status: "queued", error: { type: "Timeout" } } });
    // Swept again (another node's sweep found it too): not past its time any more, nothing changes.
    const again = await act(store(), { kind: "expire", ...policy(), id: b.job.id, nowMs: T0 + 5_000 });
    expect(again).toMatchObject({ events: [], job: { status: "queued" } });
    expect((await store().jobGet({ id: b.job.id }))?.updatedAtMs).toBe(expired.job.updatedAtMs);
    const all = await store().jobListExpired({ nowMs: T0 + 60_000, limit: 10 });
    expect(all.map((x) => x.id)).toEqual([a.job.id]);
  });

  test("jobs: webhook outbox rows are written with the transition, claimed, recorded and listed", async () => {
    const q = await makeQueue();
    const webhook: JobWebhook = { url: "https://hooks.example/x", events: ["job.started", "job.succeeded"] };
    const { job } = await submit(q, { webhook });
    await lease(q, { token: `${q.id}.tok-aaaaaaaa` });
    await act(store(), { kind: "complete", id: job.id, leaseToken: `${q.id}.tok-aaaaaaaa`, nowMs: T0 + 1, outputJson: "1", resultTtlSeconds: 1 });
    const claimed = await store().webhookDeliveryClaim({ nowMs: T0 + 1, limit: 10, claimMs: 60_000 });
    expect(claimed.map((d) => [d.event, d.job.status, d.url])).toEqual([
      ["job.started", "running", webhook.url],
      ["job.succeeded", "succeeded", webhook.url],
    ]);
    expect(claimed[0]!.job.leaseToken).toBeUndefined(); // snapshots never carry the lease
    expect(claimed.map((d) => d.nextAttemptAtMs)).toEqual([T0 + 60_001, T0 + 60_001]); // as claimed
    expect(await store().webhookDeliveryClaim({ nowMs: T0 + 2, limit: 10, claimMs: 60_000 })).toEqual([]);
    expect(await store().webhookDeliveryNextDueAt()).toBe(T0 + 60_001);
    await store().webhookDeliveryRecord({ id: claimed[0]!.id, nowMs: T0 + 3, delivered: true, statusCode: 204 });
    await store().webhookDeliveryRecord({ id: claimed[1]!.id, nowMs: T0 + 3, delivered: false, statusCode: 500, error: "HTTP 500", nextAttemptAtMs: T0 + 5_000 });
    const listed = await store().webhookDeliveryList({ jobId: job.id });
    expect(listed.map((d) => [d.status, d.attempts, d.lastStatusCode, d.nextAttemptAtMs])).toEqual([
      ["delivered", 1, 204, undefined],
      ["pending", 1, 500, T0 + 5_000],
    ]);
    // A finished job is kept while a delivery about it is pending.
    expect((await store().jobPrune({ nowMs: T0 + 10_000, limit: 10 })).jobs).toBe(0);
    await store().webhookDeliveryRecord({ id: claimed[1]!.id, nowMs: T0 + 6_000, delivered: false, error: "gave up" });
    expect((await store().jobPrune({ nowMs: T0 + 10_000, limit: 10 })).jobs).toBe(1);
    expect(await store().jobGet({ id: job.id })).toBeUndefined();
  });

  test("jobs: queue settings, and everything survives reopen", async () => {
    const q = await makeQueue();
    expect(await store().jobQueueSettingsGet({ queueId: q.id })).toBeUndefined();
    await store().jobQueueSettingsPut({ queueId: q.id, settings: { ...defaultJobQueueSettings, maxAttempts: 9 }, nowMs: T0 });
    const { job } = await submit(q);
    await reopen();
    expect((await store().jobQueueSettingsGet({ queueId: q.id }))?.maxAttempts).toBe(9);
    expect((await store().jobGet({ id: job.id }))?.status).toBe("queued");
    expect((await lease(q)).leased.map((j) => j.id)).toEqual([job.id]);
  });
}
