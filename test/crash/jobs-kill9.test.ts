/**
 * Crash safety of the jobs API with real processes: the CLI server is SIGKILLed while submitters
 * (plain HTTP and the SDK), a plain-HTTP worker and the SDK worker (`queue.work()`, in this
 * process) are all busy, then restarted on the same data dir and port. Checked after it:
 * - every submit answered 201/200 exists with its id and input; a submit in flight at the kill,
 *   resent with its Idempotency-Key, is created or replayed — one job per key, never two (submits
 *   held by ?wait= at the kill were written but never answered: their resends must be replays);
 * - every completion acknowledged (a 200 of …/complete, or an ack result `ok: true`) is
 *   `succeeded` with that output and was never leased again;
 * - jobs leased and never reported at the kill run again once their lease ends, and succeed;
 * - a webhook delivery pending in the outbox at the kill is delivered after the restart;
 * - the SDK worker rides out the outage without being restarted: it retries, leases again from
 *   the new server, and its whole batch ends succeeded, a job's handler running again only when
 *   no completion of its earlier run was acknowledged.
 *
 * What a kill -9 can and can't show: the process dies, the kernel doesn't, so a commit that
 * reached the page cache survives without its fsync. An answer sent before its COMMIT is caught
 * here; one sent after COMMIT but before the WAL sync (or synchronous=OFF) is not — that takes a
 * power cut, which no test here simulates.
 *
 * The kill lands after a seeded-random number of answered submits (SLUICE_CRASH_SEED replays one).
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type Job, type LeasedJob, type QueueClient, Sluice, SluiceApiError, SluiceNetworkError, type Worker, type WorkerPhase } from "../../client/src/index.js";
import { type CliServer, killAllChildren, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor, within } from "../support/wait.js";
import { webhookRetry } from "../../src/core/index.js";
import {
  type Answer,
  type Input,
  Ledger,
  type Output,
  Outage,
  type Receiver,
  api,
  inputOf,
  observingFetch,
  plainWorker,
  seededRandom,
  staleLeaseCodes,
  startReceiver,
} from "./jobs-crash-kit.js";

/** Sized for a few seconds of traffic on two cores, with the kill well inside it. */
const sdkJobs = 600;
const plainJobs = 240;
/** Leased just before the kill and never reported: they must come back after their lease. */
const heldJobs = 4;
/** Completed before the kill, their webhook refused until after it. */
const hookJobs = 3;
/** Submitted with ?wait= to a queue no one works before the kill: written, never answered. */
const waitedJobs = 3;
/** Short, so jobs stranded by the kill come back soon after the restart. */
const leaseSeconds = 2;
const seed = Number(process.env.SLUICE_CRASH_SEED ?? 424_242);

const q = { sdk: "crash-sdk", plain: "crash-plain", held: "crash-held", hooks: "crash-hooks", waited: "crash-waited" } as const;
const keyOf = (queue: string, n: number): string => `${queue}-${n}`;

let worker: Worker | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  // A failed run may leave the worker holding jobs of a dead server: don't wait long for it.
  if (worker) await within(5_000, worker.close({ timeoutMs: 500 }), "worker close").catch(() => {});
  worker = undefined;
  await killAllChildren();
  await receiver?.close();
  receiver = undefined;
});
afterAll(removeTempDirs);

interface Submitted {
  queue: string;
  n: number;
  id: string;
  replayed: boolean;
  generation: number;
}

interface Run {
  jobId: string;
  leaseId: string;
  attempt: number;
  generation: number;
}

async function listAll(baseUrl: string, queue: string): Promise<Map<string, Job<Input, Output>>> {
  const jobs = new Map<string, Job<Input, Output>>();
  let cursor: string | null = null;
  do {
    const res: Answer<{ jobs: Job<Input, Output>[]; nextCursor: string | null }> = await api(
      baseUrl,
      "GET",
      `/v1/queues/${queue}/jobs?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(res.status).toBe(200);
    for (const job of res.body.jobs) jobs.set(job.id, job);
    cursor = res.body.nextCursor;
  } while (cursor);
  return jobs;
}

async function succeededCount(baseUrl: string, queue: string): Promise<number> {
  const res = await api<{ queue: { stats: { jobs: { succeeded: number } } } }>(baseUrl, "GET", `/v1/queues/${queue}`);
  return res.status === 200 ? res.body.queue.stats.jobs.succeeded : 0;
}

describe("jobs under kill -9", () => {
  it("keeps every acknowledged submit and completion, reruns what was running, delivers pending webhooks, and the SDK worker rides it out", async () => {
    const random = seededRandom(seed);
    const context = `seed ${seed} (SLUICE_CRASH_SEED replays it)`;
    const dataDir = await makeTempDir("sluice-jobs-crash-");
    receiver = await startReceiver();
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const serverArgs = ["--webhook-allow-private", "--webhook-secret", secret];
    const first = await spawnCli({ dataDir, extraArgs: serverArgs });
    const baseUrl = first.url;
    const outage = new Outage();
    const ledger = new Ledger(outage);
    const failures: unknown[] = [];
    const tasks: Promise<void>[] = [];
    const background = (task: Promise<void>): void => void tasks.push(task.catch((err: unknown) => void failures.push(err)));
    const noFailures = (): true => {
      if (failures.length > 0) throw failures[0];
      return true;
    };

    // Webhooks first: their retry is 5 s after the refused attempt, which the rest of the run overlaps.
    const hookIds: string[] = [];
    for (let n = 0; n < hookJobs; n++) {
      const res = await api<{ job: Job }>(baseUrl, "POST", `/v1/queues/${q.hooks}/jobs`, { input: inputOf(q.hooks, n), webhook: { url: receiver.url, events: ["job.succeeded"] } });
      expect(res.status).toBe(201);
      hookIds.push(res.body.job.id);
    }
    const hookLeases = await api<{ jobs: LeasedJob<Input>[] }>(baseUrl, "POST", `/v1/queues/${q.hooks}/leases`, { max: hookJobs, leaseSeconds: 30 });
    expect(hookLeases.body.jobs).toHaveLength(hookJobs);
    for (const job of hookLeases.body.jobs) {
      ledger.leased(job);
      const output: Output = { n: job.input.n, attempt: job.attempt };
      expect((await api(baseUrl, "POST", `/v1/jobs/${job.id}/complete`, { leaseId: job.leaseId, output })).status).toBe(200);
      ledger.acked(job.id, job.leaseId, output, "route");
    }
    // Each delivery refused once and recorded as pending (not merely claimed, which would hold it a minute).
    await waitFor(
      async () => {
        for (const id of hookIds) {
          const d = (await api<{ job: Job }>(baseUrl, "GET", `/v1/jobs/${id}`)).body.job.webhookDeliveries?.[0];
          if (!(d?.status === "pending" && d.attempts === 1)) return false;
        }
        return true;
      },
      { what: "each webhook refused once and pending" },
    );
    const hookEventIds = new Set(receiver.deliveries.map((d) => d.headers["webhook-id"]));
    expect(hookEventIds.size).toBe(hookJobs);

    // Jobs to hold when the kill comes.
    for (let n = 0; n < heldJobs; n++) {
      expect((await api(baseUrl, "POST", `/v1/queues/${q.held}/jobs`, { input: inputOf(q.held, n) })).status).toBe(201);
    }

    // The load: submitters on two queues, a plain-HTTP worker on one, the SDK worker on the other.
    const submits: Submitted[] = [];
    let unanswered = 0;
    const record = (queue: string, n: number, job: { id: string }, replayed: boolean): void =>
      void submits.push({ queue, n, id: job.id, replayed, generation: outage.generation });
    const submitPlain = async (queue: string, n: number): Promise<void> => {
      for (;;) {
        let res: Answer<{ job: Job }>;
        try {
          res = await api(baseUrl, "POST", `/v1/queues/${queue}/jobs`, { input: inputOf(queue, n), maxAttempts: 10 }, { "idempotency-key": keyOf(queue, n) });
        } catch (err) {
          unanswered++;
          await outage.survive(err);
          continue;
        }
        if (res.status !== 201 && res.status !== 200) throw new Error(`submit ${keyOf(queue, n)}: ${res.status} ${JSON.stringify(res.body)}`);
        return record(queue, n, res.body.job, res.headers.get("idempotent-replayed") === "true");
      }
    };
    const submitters = new Sluice({ url: baseUrl, attempts: 3 });
    const submitSdk = async (client: QueueClient, n: number): Promise<void> => {
      for (;;) {
        try {
          const handle = await client.submit(inputOf(client.name, n), { idempotencyKey: keyOf(client.name, n), maxAttempts: 10 });
          return record(client.name, n, handle.job, handle.replayed);
        } catch (err) {
          if (!(err instanceof SluiceNetworkError)) throw err;
          unanswered++;
          await outage.survive(err);
        }
      }
    };
    for (let k = 0; k < 4; k++) {
      background(
        (async () => {
          for (let n = k; n < sdkJobs; n += 4) await (k < 2 ? submitPlain(q.sdk, n) : submitSdk(submitters.queue(q.sdk), n));
        })(),
      );
    }
    for (let k = 0; k < 2; k++) {
      background(
        (async () => {
          for (let n = k; n < plainJobs; n += 2) await submitPlain(q.plain, n);
        })(),
      );
    }
    let stopWorkers = false;
    for (let k = 0; k < 2; k++) background(plainWorker({ baseUrl, queue: q.plain, leaseSeconds, ledger, outage, stop: () => stopWorkers }));

    const runs = new Map<string, Run[]>();
    const workerErrors: Array<{ err: unknown; phase: WorkerPhase; jobId?: string; down: boolean }> = [];
    const sluice = new Sluice({ url: baseUrl, fetch: observingFetch(ledger) });
    worker = sluice.queue(q.sdk).work<Input, Output>(
      async (job) => {
        runs.set(job.id, [...(runs.get(job.id) ?? []), { jobId: job.id, leaseId: job.leaseId, attempt: job.attempt, generation: outage.generation }]);
        // Inference takes a moment: some handlers are mid-run when the kill comes.
        if (job.input.n % 4 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        return { n: job.input.n, attempt: job.attempt };
      },
      { concurrency: 8, leaseSeconds, waitSeconds: 1, onError: (err, where) => workerErrors.push({ err, ...where, down: outage.down }) },
    );
    /** Set if the worker stops without close(): it must ride out the outage instead. */
    let workerEnded: { error: unknown } | undefined;
    worker.done.catch((error: unknown) => (workerEnded = { error }));

    // Submits held by ?wait= (no worker on their queue): on disk before the kill, never answered.
    const submitWaited = (n: number, wait: boolean): Promise<Answer<{ job: Job }>> =>
      api(baseUrl, "POST", `/v1/queues/${q.waited}/jobs${wait ? "?wait=30" : ""}`, { input: inputOf(q.waited, n) }, { "idempotency-key": keyOf(q.waited, n) });
    expect((await api(baseUrl, "PUT", `/v1/queues/${q.waited}`, {})).status).toBe(200);
    const waitedAnswers = Array.from({ length: waitedJobs }, (_, n) =>
      submitWaited(n, true).then(
        (res) => `answered ${res.status}`,
        () => "no answer",
      ),
    );
    const waitedIds = await waitFor(
      async () => {
        const jobs = await listAll(baseUrl, q.waited);
        return jobs.size === waitedJobs && new Map([...jobs.values()].map((j) => [j.input.n, j.id]));
      },
      { what: "the waiting submits to be written" },
    );

    // Kill mid-traffic: after a seeded number of answered submits, once both workers have completed some.
    const killAfterSubmits = 150 + Math.floor(random() * 250);
    await waitFor(
      () => noFailures() && submits.filter((s) => s.queue === q.sdk).length >= killAfterSubmits && ledger.ackCount(q.sdk) >= 30 && ledger.ackCount(q.plain) >= 20,
      { timeoutMs: 20_000, what: `${killAfterSubmits} submits and some completions (${context})` },
    );
    const held = await api<{ jobs: LeasedJob<Input>[] }>(baseUrl, "POST", `/v1/queues/${q.held}/leases`, {
      max: heldJobs,
      leaseSeconds,
    });
    expect(held.body.jobs).toHaveLength(heldJobs);
    for (const job of held.body.jobs) ledger.leased(job);
    outage.down = true;
    process.kill(first.pid, "SIGKILL");
    expect((await within(10_000, first.exited, "the killed server to exit")).signal).toBe("SIGKILL");
    expect(await Promise.all(waitedAnswers)).toEqual(Array(waitedJobs).fill("no answer"));
    receiver.accept();

    outage.generation = 2;
    const second: CliServer = await spawnCli({ dataDir, port: first.port, extraArgs: serverArgs });
    expect(second.url).toBe(baseUrl);
    outage.up();
    const ackedBeforeKill = [...ledger.acks.values()].flat().filter((a) => a.generation === 1);

    // At once after the restart: every submit answered by the killed server is there, input intact...
    const afterRestart = new Map<string, Job<Input, Output>>();
    for (const queue of Object.values(q)) for (const [id, job] of await listAll(baseUrl, queue)) afterRestart.set(id, job);
    const answeredBeforeKill = submits.filter((s) => s.generation === 1);
    expect(answeredBeforeKill.length).toBeGreaterThanOrEqual(killAfterSubmits);
    const lostSubmits = answeredBeforeKill.filter((s) => !afterRestart.has(s.id)).map((s) => keyOf(s.queue, s.n));
    const mangled = answeredBeforeKill.filter((s) => afterRestart.has(s.id) && JSON.stringify(afterRestart.get(s.id)!.input) !== JSON.stringify(inputOf(s.queue, s.n)));
    expect({ lostSubmits, mangled }, context).toEqual({ lostSubmits: [], mangled: [] });
    // ...and every completion it acknowledged is succeeded with that output.
    expect(ackedBeforeKill.length).toBeGreaterThanOrEqual(50);
    const lostCompletions = ackedBeforeKill.filter((a) => {
      const job = afterRestart.get(a.jobId);
      return job?.status !== "succeeded" || JSON.stringify(job.output) !== JSON.stringify(a.output);
    });
    expect(lostCompletions, context).toEqual([]);

    // The submits waiting at the kill, resent with their keys, are replays of the jobs the killed server wrote.
    for (let n = 0; n < waitedJobs; n++) {
      const res = await submitWaited(n, false);
      expect({ status: res.status, replayed: res.headers.get("idempotent-replayed"), id: res.body.job.id }).toEqual({ status: 200, replayed: "true", id: waitedIds.get(n) });
    }

    // Everything finishes: stranded leases come back, the SDK worker carries on, the webhook goes out.
    background(plainWorker({ baseUrl, queue: q.held, leaseSeconds, ledger, outage, stop: () => stopWorkers }));
    let progress = "";
    await waitFor(
      async () => {
        noFailures();
        if (workerEnded) throw new Error(`the SDK worker stopped on its own: ${String(workerEnded.error)}`);
        const succeeded = await Promise.all([q.sdk, q.plain, q.held].map((queue) => succeededCount(baseUrl, queue)));
        const hooks = receiver!.deliveries.filter((d) => d.answered === 200).length;
        progress = `succeeded ${succeeded.join("/")} of ${sdkJobs}/${plainJobs}/${heldJobs}, webhooks ${hooks} of ${hookJobs}`;
        return succeeded[0]! >= sdkJobs && succeeded[1]! >= plainJobs && succeeded[2]! >= heldJobs && hooks >= hookJobs;
      },
      // A delivery claimed at the kill is held for the claim period before the new server retries it.
      { timeoutMs: webhookRetry.claimMs + 30_000, intervalMs: 50, what: `every job succeeded and every webhook delivered (${context})` },
    ).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen: ${progress}`);
    });
    stopWorkers = true;
    await within(10_000, Promise.all(tasks), "submitters and plain workers to end");
    noFailures();
    await within(10_000, worker.close(), "the SDK worker to close");
    await worker.done;

    // One job per Idempotency-Key, every answered submit (either server's) among them, input intact.
    const final = new Map<string, Job<Input, Output>>();
    for (const queue of Object.values(q)) for (const [id, job] of await listAll(baseUrl, queue)) final.set(id, job);
    expect([...final.values()].filter((j) => j.queue === q.waited).map((j) => j.id).sort()).toEqual([...waitedIds.values()].sort());
    for (const [queue, count] of [
      [q.sdk, sdkJobs],
      [q.plain, plainJobs],
    ] as const) {
      const jobs = [...final.values()].filter((j) => j.queue === queue);
      expect(jobs.map((j) => j.input.n).sort((a, b) => a - b), `${queue}: one job per key (${context})`).toEqual(Array.from({ length: count }, (_, n) => n));
      expect(jobs.filter((j) => j.status !== "succeeded")).toEqual([]);
    }
    const byKey = new Map<string, string>();
    for (const s of submits) {
      expect(final.get(s.id)?.input, keyOf(s.queue, s.n)).toEqual(inputOf(s.queue, s.n));
      expect(byKey.get(keyOf(s.queue, s.n)) ?? s.id).toBe(s.id);
      byKey.set(keyOf(s.queue, s.n), s.id);
    }
    // Replays answer only the resends of submits in flight at the kill.
    expect(unanswered).toBeGreaterThanOrEqual(1);
    expect(submits.filter((s) => s.replayed).length).toBeLessThanOrEqual(unanswered);

    // Per job of both workers: at most one acknowledged completion; the stored output is the latest
    // lease's; an acknowledged completion is that latest lease's (nothing leased it after), and a job
    // with none finished through a completion whose answer the kill cut off.
    for (const job of final.values()) {
      if (job.queue === q.waited) continue; // never worked on
      const leases = ledger.leasesByJob.get(job.id) ?? [];
      const acks = ledger.acks.get(job.id) ?? [];
      const last = leases.at(-1);
      const where = `${job.queue} #${job.input.n} ${job.id} (${context})`;
      expect(acks.length, where).toBeLessThanOrEqual(1);
      expect(last, where).toBeDefined();
      expect(job.output, where).toEqual({ n: job.input.n, attempt: job.attempt });
      expect(last!.attempt, where).toBe(job.attempt);
      if (acks[0]) {
        expect(acks[0].leaseId, where).toBe(last!.leaseId);
        expect(leases.filter((l) => l.seq > acks[0]!.seq), where).toEqual([]);
      } else {
        expect(last!.generation, `${where}: succeeded with no acknowledged completion`).toBe(1);
      }
    }

    // The SDK worker: each handler run is its own lease; a job ran again only after a run the kill
    // stranded, and never after a run whose completion was acknowledged.
    for (const [jobId, jobRuns] of runs) {
      const acked = new Set((ledger.acks.get(jobId) ?? []).map((a) => a.leaseId));
      expect(new Set(jobRuns.map((r) => r.leaseId)).size).toBe(jobRuns.length);
      for (const earlier of jobRuns.slice(0, -1)) {
        expect(acked.has(earlier.leaseId), `job ${jobId} ran again after an acknowledged completion (${context})`).toBe(false);
        expect(earlier.generation, `job ${jobId} ran twice without a kill between (${context})`).toBe(1);
      }
    }
    expect(runs.size).toBe(sdkJobs);
    const rerun = [...runs.values()].filter((r) => r.length > 1).length;
    expect(rerun).toBeLessThanOrEqual(64); // only what the worker held at the kill
    expect(ledger.leaseCount(q.sdk, 1)).toBeGreaterThan(0);
    expect(ledger.leaseCount(q.sdk, 2)).toBeGreaterThan(0);
    expect(worker.stats).toMatchObject({ active: 0 });
    // What the worker told onError: the outage (network errors while the server was down) and, for
    // leases of the killed server, the 409s their late reports got. Nothing else, nothing vague.
    const unexplained = workerErrors.filter(
      ({ err, down, jobId }) =>
        !(err instanceof SluiceNetworkError && down) &&
        !(err instanceof SluiceApiError && err.status === 409 && staleLeaseCodes.has(err.code) && ledger.leasesByJob.get(jobId!)?.[0]?.generation === 1),
    );
    expect(unexplained.map(({ err, phase, jobId }) => ({ phase, jobId, err: String(err) }))).toEqual([]);
    expect(workerErrors.some((e) => e.phase === "lease" && e.err instanceof SluiceNetworkError), "the worker saw the outage").toBe(true);

    // Held leases came back after their lease, ran once more, and the old lease is refused.
    for (const job of held.body.jobs) {
      expect(final.get(job.id)).toMatchObject({ status: "succeeded", attempt: 2 });
      const stale = await api<{ error: { code: string } }>(baseUrl, "POST", `/v1/jobs/${job.id}/complete`, { leaseId: job.leaseId, output: null });
      expect(stale.status).toBe(409);
      expect(stale.body.error.code).toBe("JobAlreadyFinished");
    }

    // The webhooks pending at the kill were delivered by the new server: same events, signed.
    const delivered = receiver.deliveries.filter((d) => d.answered === 200);
    expect(new Set(delivered.map((d) => d.headers["webhook-id"]))).toEqual(hookEventIds);
    const verifier = new Webhook(secret);
    for (const d of delivered) {
      const payload = verifier.verify(d.body, d.headers) as { type: string; data: Job<Input> };
      expect(payload.type).toBe("job.succeeded");
      expect(payload.data).toMatchObject({ status: "succeeded", output: { n: payload.data.input.n, attempt: 1 } });
      expect(hookIds).toContain(payload.data.id);
    }
    for (const id of hookIds) {
      const d = (await api<{ job: Job }>(baseUrl, "GET", `/v1/jobs/${id}`)).body.job.webhookDeliveries?.[0];
      expect(d).toMatchObject({ status: "delivered", lastStatusCode: 200 });
    }

    second.child.kill("SIGTERM");
    expect(await within(15_000, second.exited, "graceful exit")).toEqual({ code: 0, signal: null });
  }, 240_000);
});
