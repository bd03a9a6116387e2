/**
 * The jobs API per account, through a real server (on SQLite, and on PostgreSQL in the postgres
 * project), the TS SDK and plain HTTP, with three accounts' bearer tokens: A is the server's own
 * account, B and C are others. Each account's queue names are its own queues; another account's
 * job or queue is JobNotFound / QueueNotFound (404, nothing tells it exists) on every route — get,
 * ?wait, cancel, retry, events, worker calls; idempotency keys, schedules and queue settings are
 * per account; each account's webhooks are signed with its own secret.
 */
import type { IncomingHttpHeaders } from "node:http";
import { Sluice } from "@sluice/client";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, openEventStream } from "../jobs/http-harness.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";
import { startReceiver } from "../support/webhook-receiver.js";
import { writeCredentials } from "../auth/fixtures.js";

const accountA = "111111111111";
const accountB = "222222222222";
const accountC = "333333333333";
const serverSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const secretB = "whsec_C2VjcmV0LW9mLWFjY291bnQtYi0wMTIzNDU2Nzg5";
const token = { A: "tok-accounts-a-0123456789abcdef", B: "tok-accounts-b-0123456789abcdef", C: "tok-accounts-c-0123456789abcdef" } as const;
type Account = keyof typeof token;

const credentials = `
[[tokens]]
name = "a"
token = "${token.A}"
accountId = "${accountA}"

[[tokens]]
name = "b"
token = "${token.B}"
accountId = "${accountB}"

[[tokens]]
name = "c"
token = "${token.C}"
accountId = "${accountC}"

[[accounts]]
id = "${accountB}"
webhookSecret = "${secretB}"
`;

let srv: TestServer;
const sdk = (account: Account): Sluice => new Sluice({ url: srv.url, token: token[account], batchSubmits: false });

async function api(account: Account, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${srv.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token[account]}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : undefined };
}

/** Leases one job of `queue` as `account`'s worker. */
async function leaseOne(account: Account, queue: string): Promise<{ id: string; leaseId: string } | undefined> {
  const res = await api(account, "POST", `/v1/queues/${queue}/leases`, { max: 1 });
  expect(res.status).toBe(200);
  return (res.body.jobs as Array<{ id: string; leaseId: string }>)[0];
}

beforeAll(async () => {
  const dir = await makeTempDir("sluice-job-accounts-");
  srv = await startTestServer({
    config: { credentialsFile: await writeCredentials(dir, "credentials.toml", credentials), accountId: accountA, webhookSecret: serverSecret, webhookAllowPrivate: true },
  });
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

describe("jobs per account", () => {
  it("a queue name is a queue in each account: submits, lists, leases and completions stay in theirs", async () => {
    const submitted: Record<Account, string> = { A: "", B: "", C: "" };
    for (const account of ["A", "B", "C"] as const) submitted[account] = (await sdk(account).queue("orders").submit({ from: account })).id;
    for (const account of ["A", "B", "C"] as const) {
      const page = await sdk(account).jobs.list("orders");
      expect(page.jobs.map((j) => j.id)).toEqual([submitted[account]]);
      expect(page.jobs[0]!.input).toEqual({ from: account });
    }
    // B's worker gets B's job only, and completes it with its own token.
    const leased = await leaseOne("B", "orders");
    expect(leased?.id).toBe(submitted.B);
    expect(await leaseOne("B", "orders")).toBeUndefined();
    expect((await api("B", "POST", `/v1/jobs/${leased!.id}/complete`, { leaseId: leased!.leaseId, output: "done by B" })).status).toBe(200);
    expect((await sdk("B").jobs.get(submitted.B)).status).toBe("succeeded");
    expect((await sdk("A").jobs.get(submitted.A)).status).toBe("queued");
    expect((await sdk("C").jobs.get(submitted.C)).status).toBe("queued");
    // Each account's queue has its own stats.
    const statsA = await api("A", "GET", "/v1/queues/orders");
    const statsB = await api("B", "GET", "/v1/queues/orders");
    expect(statsA.body.queue.stats.jobs).toMatchObject({ queued: 1, succeeded: 0 });
    expect(statsB.body.queue.stats.jobs).toMatchObject({ queued: 0, succeeded: 1 });
  });

  it("another account's job is JobNotFound on every route, exactly as a job that doesn't exist", async () => {
    const { id } = await sdk("A").queue("private-jobs").submit({ secret: true });
    const leased = await leaseOne("A", "private-jobs");
    expect(leased?.id).toBe(id);
    const attempts: Array<[string, string, unknown?]> = [
      ["GET", `/v1/jobs/${id}`],
      ["GET", `/v1/jobs/${id}?wait=1`],
      ["GET", `/v1/jobs/${id}/events`],
      ["POST", `/v1/jobs/${id}/cancel`, {}],
      ["POST", `/v1/jobs/${id}/retry`, {}],
      ["POST", `/v1/jobs/${id}/heartbeat`, { leaseId: leased!.leaseId }],
      ["POST", `/v1/jobs/${id}/complete`, { leaseId: leased!.leaseId, output: "stolen" }],
      ["POST", `/v1/jobs/${id}/fail`, { leaseId: leased!.leaseId, error: { message: "no" } }],
      ["POST", `/v1/jobs/${id}/release`, { leaseId: leased!.leaseId }],
    ];
    for (const [method, path, body] of attempts) {
      const other = await api("B", method, path, body);
      const missing = await api("B", method, path.replace(id, "no-such-job-id"), body);
      expect(other.status, `${method} ${path}`).toBe(404);
      expect(other.body.error.code, `${method} ${path}`).toBe("JobNotFound");
      expect(other.body.error.message.replace(id, "X")).toBe(missing.body.error.message.replace("no-such-job-id", "X"));
    }
    // A worker of B acking A's job inside a lease request is refused that way too.
    const acked = await api("B", "POST", "/v1/queues/private-jobs/leases", { max: 0, complete: [{ id, leaseId: leased!.leaseId, output: "stolen" }] });
    expect(acked.body.results).toEqual([{ id, ok: false, error: expect.objectContaining({ code: "JobNotFound" }) }]);
    // Nothing changed: A's job is still running under A's lease, which A can complete.
    const done = await api("A", "POST", `/v1/jobs/${id}/complete`, { leaseId: leased!.leaseId, output: "mine" });
    expect(done.status).toBe(200);
    expect(done.body.job).toMatchObject({ status: "succeeded", output: "mine" });
    await expect(sdk("C").jobs.get(id)).rejects.toMatchObject({ status: 404, code: "JobNotFound" });
  });

  it("another account's queue is not there: QueueNotFound on the queue routes, and a submit makes the caller's own", async () => {
    await sdk("A").queue("only-in-a").submit({ n: 1 });
    for (const [method, path] of [
      ["GET", "/v1/queues/only-in-a/jobs"],
      ["GET", "/v1/queues/only-in-a/messages"],
      ["POST", "/v1/queues/only-in-a/purge"],
    ] as const) {
      const res = await api("B", method, path, method === "POST" ? {} : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe("QueueNotFound");
    }
    const listB = await api("B", "GET", "/v1/queues?prefix=only-in");
    expect(listB.body.queues).toEqual([]);
    const listA = await api("A", "GET", "/v1/queues?prefix=only-in");
    expect(listA.body.queues.map((q: { name: string }) => q.name)).toEqual(["only-in-a", "only-in-a-dlq"]);
    await sdk("B").queue("only-in-a").submit({ n: 2 });
    expect((await sdk("A").jobs.list("only-in-a")).jobs.map((j) => j.input)).toEqual([{ n: 1 }]);
    expect((await sdk("B").jobs.list("only-in-a")).jobs.map((j) => j.input)).toEqual([{ n: 2 }]);
  });

  it("a job can't depend on another account's job: that parent is one that doesn't exist", async () => {
    const parent = (await sdk("A").queue("pipeline").submit({ stage: 1 })).id;
    const child = await api("B", "POST", "/v1/queues/pipeline/jobs", { input: { stage: 2 }, dependsOn: [parent] });
    expect(child.status).toBe(400);
    expect(child.body.error).toMatchObject({ code: "ValidationFailed", message: expect.stringContaining("does not exist") });
    expect((await sdk("B").jobs.list("pipeline")).jobs).toEqual([]);
  });

  it("an Idempotency-Key is unique per account and queue: the same key in two accounts makes two jobs", async () => {
    const a = await api("A", "POST", "/v1/queues/idem/jobs", { input: "a" }, { "idempotency-key": "order-42" });
    const b = await api("B", "POST", "/v1/queues/idem/jobs", { input: "b" }, { "idempotency-key": "order-42" });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.job.id).not.toBe(a.body.job.id);
    const replayB = await api("B", "POST", "/v1/queues/idem/jobs", { input: "b" }, { "idempotency-key": "order-42" });
    expect(replayB.status).toBe(200);
    expect(replayB.body.job.id).toBe(b.body.job.id);
    expect((await api("A", "POST", "/v1/queues/idem/jobs", { input: "other" }, { "idempotency-key": "order-42" })).status).toBe(422);
  });

  it("?wait on a submit holds for the caller's job and is woken by its own account's worker", async () => {
    const held = api("C", "POST", "/v1/queues/waits/jobs?wait=30", { input: 7 });
    const leased = await waitFor(async () => leaseOne("C", "waits"), { what: "C's job to lease" });
    expect(await leaseOne("B", "waits")).toBeUndefined();
    await api("C", "POST", `/v1/jobs/${leased.id}/complete`, { leaseId: leased.leaseId, output: 49 });
    const answer = await held;
    expect(answer.body.job).toMatchObject({ id: leased.id, status: "succeeded", output: 49 });
  });

  it("GET /v1/events streams only the caller's account's events, and ?queue= means its own queue", async () => {
    const submit = async (account: Account, input: string): Promise<string> => (await api(account, "POST", "/v1/queues/stream/jobs", { input })).body.job.id as string;
    /** B's jobs the stream shows until `untilJob`'s event (A's submits, when they leak, come before). */
    const readUntil = async (stream: Awaited<ReturnType<typeof openEventStream>>, untilJob: string): Promise<string[]> => {
      const seen: string[] = [];
      for (let e = await stream.next(); e && e.data.job.id !== untilJob; e = await stream.next()) seen.push(e.data.job.id as string);
      return seen;
    };
    for (const path of ["/v1/events", "/v1/events?queue=stream"]) {
      // Live: the stream is following once it shows B's marker; A submits, then B.
      const live = await openEventStream(`${srv.url}${path}`, { authorization: `Bearer ${token.B}` });
      expect(live.status).toBe(200);
      const marker = await submit("B", "marker");
      await readUntil(live, marker);
      const aJob = await submit("A", "a");
      const bJob = await submit("B", "b");
      expect(await readUntil(live, bJob)).not.toContain(aJob);
      live.close();
      // Replayed from the log (since=0: every event so far, of every test of this file).
      const replay = await openEventStream(`${srv.url}${path}${path.includes("?") ? "&" : "?"}since=0`, { authorization: `Bearer ${token.B}` });
      const replayed = await readUntil(replay, bJob);
      replay.close();
      expect(replayed).not.toContain(aJob);
      expect(replayed).toContain(marker);
      for (const id of new Set(replayed)) await expect(sdk("B").jobs.get(id)).resolves.toMatchObject({ id });
    }
  });

  it("schedules are per account: the same name in two accounts is two schedules, each submitting to its own queue", async () => {
    await sdk("A").schedules.put("nightly", { queue: "reports", cron: "0 3 * * *", input: { for: "A" } });
    await sdk("B").schedules.put("nightly", { queue: "reports", everySeconds: 3600, input: { for: "B" } });
    expect((await sdk("A").schedules.get("nightly")).cron).toBe("0 3 * * *");
    expect((await sdk("B").schedules.get("nightly")).everySeconds).toBe(3600);
    await expect(sdk("C").schedules.get("nightly")).rejects.toMatchObject({ status: 404, code: "ScheduleNotFound" });
    expect((await sdk("C").schedules.list()).schedules).toEqual([]);
    await sdk("B").schedules.delete("nightly");
    await expect(sdk("B").schedules.get("nightly")).rejects.toMatchObject({ status: 404 });
    expect((await sdk("A").schedules.get("nightly")).input).toEqual({ for: "A" });
  });

  it("queue settings are per account", async () => {
    await sdk("A").queue("tuned").submit({});
    await sdk("B").queue("tuned").submit({});
    expect((await api("B", "PUT", "/v1/queues/tuned", { maxAttempts: 7 })).body.queue.settings.maxAttempts).toBe(7);
    expect((await api("A", "GET", "/v1/queues/tuned")).body.queue.settings.maxAttempts).not.toBe(7);
  });

  it("the server's own account may act for another with Sluice-Account; no other account may", async () => {
    const { id } = await sdk("B").queue("operated").submit({ for: "B" });
    const asB = { "sluice-account": accountB };
    const listed = await api("A", "GET", "/v1/queues/operated/jobs", undefined, asB);
    expect(listed.body.jobs.map((j: { id: string }) => j.id)).toEqual([id]);
    expect((await api("A", "GET", "/v1/queues?prefix=operated", undefined, asB)).body.queues.map((q: { name: string }) => q.name)).toEqual(["operated", "operated-dlq"]);
    expect((await api("A", "POST", `/v1/jobs/${id}/cancel`, {}, asB)).body.job.status).toBe("canceled");
    expect((await api("A", "GET", `/v1/jobs/${id}`)).status).toBe(404);
    const refused = await api("C", "GET", "/v1/queues/operated/jobs", undefined, asB);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("AccessDenied");
    expect((await api("B", "GET", "/v1/queues/operated/jobs", undefined, asB)).status).toBe(200);
    expect((await api("A", "GET", "/v1/queues/operated/jobs", undefined, { "sluice-account": "not-an-id" })).status).toBe(400);
  });

  it("routes over the whole server stay the server's own account's: backups refuse another account's token", async () => {
    expect((await api("B", "POST", "/v1/backup", {})).status).toBe(403);
  });
});

function verifies(secret: string, delivery: { headers: IncomingHttpHeaders; body: string }): boolean {
  const headers = Object.fromEntries(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)]));
  try {
    new Webhook(secret).verify(delivery.body, headers);
    return true;
  } catch {
    return false;
  }
}

describe("webhooks per account", () => {
  it("signs each job's webhook with its account's secret, or the server's when the account has none", async () => {
    const receiver = await startReceiver();
    try {
      const deliveryFor = async (account: Account): Promise<{ headers: IncomingHttpHeaders; body: string }> => {
        const { id } = await sdk(account).queue("hooked").submit({ from: account }, { webhook: { url: receiver.url, events: ["job.canceled"] } });
        await sdk(account).jobs.cancel(id);
        return waitFor(async () => receiver.received.find((d) => (JSON.parse(d.body) as Json).data.id === id), { what: `the webhook of ${account}'s job` });
      };
      const fromB = await deliveryFor("B");
      expect(verifies(secretB, fromB)).toBe(true);
      expect(verifies(serverSecret, fromB)).toBe(false);
      for (const account of ["A", "C"] as const) {
        const delivery = await deliveryFor(account);
        expect(verifies(serverSecret, delivery), account).toBe(true);
        expect(verifies(secretB, delivery), account).toBe(false);
      }
    } finally {
      await receiver.close();
    }
  });
});
