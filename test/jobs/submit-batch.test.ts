/**
 * POST /v1/queues/{queue}/jobs/batch over HTTP on a real server (manual clock): many submits in
 * one request, each entry handled as a lone submit — its own options, its own idempotency key,
 * its own outcome — and, with ?wait=N, an NDJSON line per entry the moment that entry's job is
 * terminal or its hold ends. Nothing here waits on wall time: streams are read as they come,
 * holds end by a worker, the clock, a DeleteQueue, a disconnect or shutdown.
 */
import { once } from "node:events";
import { connect } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Sluice } from "../../client/src/index.js";
import { waitFor, within } from "../support/wait.js";
import { type Json, type JobsServer, startJobsServer } from "./http-harness.js";
import { openApiProblem } from "./openapi-answers.js";

let s: JobsServer;
/** The server's own job-event subscribers (the webhook dispatcher listens to everything). */
let ownSubscribers: number;
beforeEach(async () => {
  s = await startJobsServer();
  ownSubscribers = s.server.jobs.subscriberCount();
});
afterEach(async () => {
  await s.stop();
});

const tooLong = "x".repeat(1024 * 1024 + 1); // over 1 MiB of JSON input: 413 MessageTooLong
const jobKeys = [
  "id", "queue", "status", "input", "output", "error", "attempt", "maxAttempts", "priority", "progress", "createdAt", "startedAt", "finishedAt",
  "updatedAt", "idempotencyKey", "metadata", "cancelRequested", "timeoutSeconds", "availableAt", "leaseExpiresAt", "webhook",
  "tenant", "requires", "dependsOn", "onParentFailure",
].sort();

async function batch(queue: string, jobs: unknown[], query = "") {
  const res = await s.api("POST", `/v1/queues/${queue}/jobs/batch${query}`, { jobs });
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
  return res.body.results as Json[];
}

async function lease(queue: string, body: Record<string, unknown> = {}): Promise<Array<{ id: string; leaseId: string; input: Json }>> {
  const res = await s.api("POST", `/v1/queues/${queue}/leases`, body);
  expect(res.status).toBe(200);
  return res.body.jobs;
}

async function jobsOf(queue: string): Promise<Json[]> {
  const res = await s.api("GET", `/v1/queues/${queue}/jobs?limit=200`);
  expect(res.status).toBe(200);
  return res.body.jobs;
}

function sqsDeleteQueue(name: string): Promise<Response> {
  return fetch(`${s.url}/`, {
    method: "POST",
    headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.DeleteQueue" },
    body: JSON.stringify({ QueueUrl: `${s.url}/000000000000/${name}` }),
  });
}

/** Resolves once `n` held requests (or streams) subscribe to the server's job events. */
async function subscribers(n: number): Promise<void> {
  await waitFor(() => s.server.jobs.subscriberCount() === ownSubscribers + n, { what: `${n} job event subscribers` });
}

/**
 * A batch submit with ?wait, its NDJSON body read a line at a time as the server writes it (not
 * at the end, as `s.api` would). The response's head goes out with the first line, so nothing
 * here waits for it until a line is asked for. Each line is checked against the published
 * BatchSubmitResult schema.
 */
function openBatchStream(queue: string, wait: number, jobs: unknown[]) {
  const controller = new AbortController();
  const response = fetch(`${s.url}/v1/queues/${queue}/jobs/batch?wait=${wait}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jobs }),
    signal: controller.signal,
  });
  response.catch(() => {}); // an aborted stream's fetch rejects; the test looks at the server instead
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let doc: Json;
  const decoder = new TextDecoder();
  let buffer = "";
  return {
    response,
    /** The next line, parsed; undefined once the response has ended (with no partial line left). */
    async next(): Promise<Json | undefined> {
      if (!reader) {
        const res = await response;
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
        expect(res.headers.get("cache-control")).toBe("no-store");
        reader = res.body!.getReader();
        doc = await (await fetch(`${s.url}/openapi.json`)).json();
      }
      for (;;) {
        const end = buffer.indexOf("\n");
        if (end >= 0) {
          const line = JSON.parse(buffer.slice(0, end)) as Json;
          buffer = buffer.slice(end + 1);
          // A line is what the JSON answer's results hold: check it by the same schema.
          const problem = openApiProblem(doc, { method: "POST", url: `/v1/queues/${queue}/jobs/batch`, status: 200, contentType: "application/json", body: { results: [line] } });
          expect(problem).toBeUndefined();
          return line;
        }
        const { done, value } = await reader.read();
        if (done) {
          expect(buffer).toBe("");
          return undefined;
        }
        buffer += decoder.decode(value, { stream: true });
      }
    },
    abort: () => controller.abort(),
  };
}

/** The next line, failing the test if it doesn't come (a line held back would hang the test otherwise). */
const nextLine = (stream: { next(): Promise<Json | undefined> }, what: string): Promise<Json | undefined> => within(5_000, stream.next(), what);

describe("POST /v1/queues/{queue}/jobs/batch", () => {
  it("creates every entry in entry order with its own options; results carry no Location, and every job is gettable", async () => {
    const res = await s.api("POST", "/v1/queues/emb/jobs/batch", {
      jobs: [
        { input: { text: "a" }, priority: 7, metadata: { user: "u1" } },
        { input: "b", delaySeconds: 60 },
        { input: ["c"], maxAttempts: 1, timeoutSeconds: 10 },
        { input: null, idempotencyKey: "key-d" },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.get("idempotent-replayed")).toBeNull();
    expect(Object.keys(res.body)).toEqual(["results"]);
    const results = res.body.results as Json[];
    expect(results.map((r) => [r.index, r.status])).toEqual([
      [0, 201],
      [1, 201],
      [2, 201],
      [3, 201],
    ]);
    for (const r of results) expect(Object.keys(r).sort()).toEqual(["index", "job", "status"]); // no location, no error
    const [a, b, c, d] = results.map((r) => r.job);
    for (const job of [a, b, c, d]) expect(Object.keys(job).sort()).toEqual(jobKeys);
    const nowIso = new Date(s.clock.nowMs()).toISOString();
    expect(a).toMatchObject({ queue: "emb", status: "queued", input: { text: "a" }, priority: 7, metadata: { user: "u1" }, maxAttempts: 3, attempt: 0, idempotencyKey: null, createdAt: nowIso });
    expect(b).toMatchObject({ status: "queued", input: "b", priority: 0, availableAt: new Date(s.clock.nowMs() + 60_000).toISOString() });
    expect(c).toMatchObject({ status: "queued", input: ["c"], maxAttempts: 1, timeoutSeconds: 10 });
    expect(d).toMatchObject({ status: "queued", input: null, idempotencyKey: "key-d" });
    expect(new Set([a.id, b.id, c.id, d.id]).size).toBe(4);
    for (const job of [a, b, c, d]) {
      const got = await s.api("GET", `/v1/jobs/${job.id}`);
      expect(got.status).toBe(200);
      expect(got.body.job).toEqual({ ...job, webhookDeliveries: [] });
    }
    // Created in entry order: the list is newest first.
    expect((await jobsOf("emb")).map((j) => j.id)).toEqual([d.id, c.id, b.id, a.id]);

    // The delayed entry is not leasable until its delay ends; the others go by priority, then FIFO.
    expect((await lease("emb", { max: 10, leaseSeconds: 600 })).map((j) => j.id)).toEqual([a.id, c.id, d.id]);
    expect(await lease("emb", { max: 10 })).toEqual([]);
    s.clock.advance(60_000);
    expect((await lease("emb", { max: 10 })).map((j) => j.id)).toEqual([b.id]);
  });

  it("entries of one priority are leased in entry order (FIFO), on a queue the batch itself creates", async () => {
    const results = await batch("fifo", Array.from({ length: 20 }, (_, i) => ({ input: i })));
    expect(results.map((r) => [r.index, r.status, r.job.input])).toEqual(Array.from({ length: 20 }, (_, i) => [i, 201, i]));
    const leased = await lease("fifo", { max: 20 });
    expect(leased.map((j) => j.input)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(leased.map((j) => j.id)).toEqual(results.map((r) => r.job.id));
  });

  it("hands the whole batch to a worker already long-polling the queue, up to its max, in the submit's own commit", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const polling = s.api("POST", "/v1/queues/q/leases", { waitSeconds: 20, max: 3 });
    await waitFor(() => s.server.queues.waiters.waiterCount() === 1, { what: "the long-polling lease to wait on the server" });
    const results = await batch("q", [{ input: 1 }, { input: 2 }, { input: 3 }, { input: 4 }]);
    const leased = (await within(5_000, polling, "long-polling lease")).body.jobs as Json[];
    // Not one job now and the rest a round trip later: the lease ran after every insert of the group.
    expect(leased.map((j) => j.input)).toEqual([1, 2, 3]);
    const rest = await lease("q", { max: 5 });
    expect(rest.map((j) => j.input)).toEqual([4]);
    expect([...leased, ...rest].map((j) => j.id).sort()).toEqual(results.map((r) => r.job.id).sort()); // each job leased exactly once
  });
});

describe("batch entries succeed and fail on their own", () => {
  it("a too-large input, bad contents or a bad webhook URL fails only its entry, with the answer a lone submit gets", async () => {
    const entries = [
      { input: "first" },
      { input: tooLong },
      { input: "third", metadata: { n: 3 } },
      { input: "\uffff" },
      { input: "fifth", webhook: { url: "ftp://x.example/h" } },
      { input: "sixth" },
    ];
    const results = await batch("iso", entries);
    expect(results.map((r) => [r.index, r.status, r.error?.code])).toEqual([
      [0, 201, undefined],
      [1, 413, "MessageTooLong"],
      [2, 201, undefined],
      [3, 400, "InvalidMessageContents"],
      [4, 400, "ValidationFailed"],
      [5, 201, undefined],
    ]);
    for (const i of [1, 3, 4]) {
      expect(Object.keys(results[i]).sort()).toEqual(["error", "index", "status"]);
      const lone = await s.api("POST", "/v1/queues/iso/jobs", entries[i]);
      expect({ status: results[i].status, error: results[i].error }, `entry ${i}`).toEqual({ status: lone.status, error: lone.body.error });
    }
    const created = [0, 2, 5].map((i) => results[i].job);
    expect(created.map((j) => j.input)).toEqual(["first", "third", "sixth"]);
    expect((await jobsOf("iso")).map((j) => j.id).sort()).toEqual(created.map((j) => j.id).sort());
    expect((await s.api("GET", "/v1/queues/iso")).body.queue.stats.jobs.queued).toBe(3);
  });

  it("a private webhook target, on a server that refuses them, fails only its entry (400), as a lone submit", async () => {
    const strict = await startJobsServer({ webhookAllowPrivate: false });
    try {
      const entries = [
        { input: 1, webhook: { url: "https://93.184.215.14/hook" } }, // a public address: no DNS lookup (and the job never ends, so nothing is delivered)
        { input: 2, webhook: { url: "http://127.0.0.1:9/hook" } },
        { input: 3, webhook: { url: "http://[::1]:9/hook" } },
        { input: 4 },
      ];
      const res = await strict.api("POST", "/v1/queues/hooks/jobs/batch", { jobs: entries });
      expect(res.status).toBe(200);
      const results = res.body.results as Json[];
      expect(results.map((r) => [r.index, r.status, r.error?.code])).toEqual([
        [0, 201, undefined],
        [1, 400, "ValidationFailed"],
        [2, 400, "ValidationFailed"],
        [3, 201, undefined],
      ]);
      expect(results[1].error.message).toMatch(/non-public address/);
      const lone = await strict.api("POST", "/v1/queues/hooks/jobs", entries[1]);
      expect({ status: results[1].status, error: results[1].error }).toEqual({ status: lone.status, error: lone.body.error });
      expect(results[0].job.webhook).toMatchObject({ url: "https://93.184.215.14/hook" });
      const listed = (await strict.api("GET", "/v1/queues/hooks/jobs")).body.jobs as Json[];
      expect(listed.map((j) => j.input).sort()).toEqual([1, 4]);
    } finally {
      await strict.stop();
    }
  });

  it("idempotency per entry: a replay answers 200 with the same job, another body 422, across lone submits and batches", async () => {
    // A lone submit's key (sent quoted, as a structured-field string) is the same key in a batch entry.
    const lone = await s.api("POST", "/v1/queues/q/jobs", { input: { a: 1 }, priority: 2 }, { "Idempotency-Key": '"k-lone"' });
    expect(lone.status).toBe(201);
    const first = await batch("q", [
      { priority: 2, input: { a: 1 }, idempotencyKey: "k-lone" }, // field order doesn't matter
      { input: { a: 2 }, idempotencyKey: "k-lone" },
      { input: { a: 1 }, idempotencyKey: "k-lone" }, // without the priority: another body
      { input: "new", idempotencyKey: "k-new" },
      { input: "plain" },
    ]);
    expect(first.map((r) => [r.index, r.status, r.error?.code])).toEqual([
      [0, 200, undefined],
      [1, 422, "IdempotencyKeyReused"],
      [2, 422, "IdempotencyKeyReused"],
      [3, 201, undefined],
      [4, 201, undefined],
    ]);
    expect(first[0].job).toMatchObject({ id: lone.body.job.id, idempotencyKey: "k-lone", priority: 2 });
    expect(first[3].job.idempotencyKey).toBe("k-new");

    // The same batch again: every keyed entry replays; the unkeyed one is a new job.
    const again = await batch("q", [
      { priority: 2, input: { a: 1 }, idempotencyKey: "k-lone" },
      { input: "new", idempotencyKey: "k-new" },
      { input: "plain" },
    ]);
    expect(again.map((r) => [r.index, r.status])).toEqual([
      [0, 200],
      [1, 200],
      [2, 201],
    ]);
    expect(again[0].job.id).toBe(lone.body.job.id);
    expect(again[1].job.id).toBe(first[3].job.id);
    expect(again[2].job.id).not.toBe(first[4].job.id);

    // A batch's key replays on a lone submit, too.
    const loneReplay = await s.api("POST", "/v1/queues/q/jobs", { input: "new" }, { "Idempotency-Key": "k-new" });
    expect([loneReplay.status, loneReplay.headers.get("idempotent-replayed"), loneReplay.body.job.id]).toEqual([200, "true", first[3].job.id]);
    expect((await s.api("POST", "/v1/queues/q/jobs", { input: "other" }, { "Idempotency-Key": "k-new" })).status).toBe(422);

    // Keys are per queue: the same key elsewhere is a new job.
    const elsewhere = await batch("q2", [{ input: "new", idempotencyKey: "k-new" }]);
    expect(elsewhere[0].status).toBe(201);
    expect(elsewhere[0].job.id).not.toBe(first[3].job.id);

    expect((await s.api("GET", "/v1/queues/q")).body.queue.stats.jobs.queued).toBe(4); // lone, k-new, plain twice
  });

  it("an entry's key is read as the Idempotency-Key header is: a quoted key is its contents, and a key the header refuses fails only its entry", async () => {
    const lone = await s.api("POST", "/v1/queues/q/jobs", { input: 1 }, { "Idempotency-Key": '"k-q"' });
    expect([lone.status, lone.body.job.idempotencyKey]).toEqual([201, "k-q"]);
    const entries = [
      { input: 1, idempotencyKey: '"k-q"' }, // the same key, quoted: a replay, whichever route sent it
      { input: 1, idempotencyKey: "k-q" },
      { input: 2, idempotencyKey: "tab\tinside" },
      { input: 3, idempotencyKey: "ключ" },
      { input: 4, idempotencyKey: '"a"b"' },
      { input: 5, idempotencyKey: '"k-\\\\"' }, // an escaped backslash: the key k-\
      { input: 6 },
    ];
    const results = await batch("q", entries);
    expect(results.map((r) => [r.index, r.status, r.job ? r.job.idempotencyKey : r.error.code])).toEqual([
      [0, 200, "k-q"],
      [1, 200, "k-q"],
      [2, 400, "ValidationFailed"],
      [3, 400, "ValidationFailed"],
      [4, 400, "ValidationFailed"],
      [5, 201, "k-\\"],
      [6, 201, null],
    ]);
    expect(results[0].job.id).toBe(lone.body.job.id);
    // Each refusal is a lone submit's, with that key as its header.
    for (const i of [2, 4]) {
      const { idempotencyKey, ...body } = entries[i]!;
      const alone = await s.api("POST", "/v1/queues/q/jobs", body, { "Idempotency-Key": idempotencyKey! });
      expect({ status: results[i].status, error: results[i].error }, `entry ${i}`).toEqual({ status: alone.status, error: alone.body.error });
    }
    expect(results[3].error.message).toMatch(/printable ASCII/);
    expect((await jobsOf("q")).map((j) => j.input).sort()).toEqual([1, 5, 6]);
  });

  it("two entries of one batch with the same key and body make one job: one 201, one 200 replay", async () => {
    const results = await batch("dup", [
      { input: "same", idempotencyKey: "k-dup" },
      { input: "same", idempotencyKey: "k-dup" },
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 201]);
    expect(results[0].job.id).toBe(results[1].job.id);
    expect(await jobsOf("dup")).toHaveLength(1);
  });

  it("a queue deleted through SQS a moment ago: every entry answers 409 QueueDeletedRecently, as a lone submit; a minute later they create", async () => {
    await batch("gone", [{ input: 0 }]);
    expect((await sqsDeleteQueue("gone")).status).toBe(200);
    const refused = await batch("gone", [{ input: 1 }, { input: 2, idempotencyKey: "k" }]);
    expect(refused.map((r) => [r.index, r.status, r.error?.code])).toEqual([
      [0, 409, "QueueDeletedRecently"],
      [1, 409, "QueueDeletedRecently"],
    ]);
    const lone = await s.api("POST", "/v1/queues/gone/jobs", { input: 1 });
    expect({ status: refused[0].status, error: refused[0].error }).toEqual({ status: lone.status, error: lone.body.error });
    s.clock.advance(61_000);
    expect((await batch("gone", [{ input: 3 }, { input: 4 }])).map((r) => r.status)).toEqual([201, 201]);
    expect((await jobsOf("gone")).map((j) => j.input).sort()).toEqual([3, 4]);
  });
});

describe("a batch whose body fails the schema is refused whole (400), submitting nothing", () => {
  const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ input: i }));
  const cases: Array<[string, unknown, RegExp]> = [
    ["no entries", { jobs: [] }, /jobs must NOT have fewer than 1 items/],
    ["101 entries", { jobs: entries(101) }, /jobs must NOT have more than 100 items/],
    ["an unknown field in a later entry", { jobs: [...entries(2), { input: 2, maxAttempt: 3 }] }, /body\.jobs\[2\]\.maxAttempt is not a field/],
    ["a bad priority in entry 3", { jobs: [...entries(3), { input: 3, priority: 99 }, { input: 4 }] }, /jobs\.3\.priority must be <= 9/],
    ["an entry without input", { jobs: [{ input: 0 }, { priority: 1 }] }, /jobs\.1 is missing the required field "input"/],
    ["a priority given as a string (no coercion)", { jobs: [{ input: 0 }, { input: 1, priority: "5" }] }, /jobs\.1\.priority must be integer/],
    ["an empty idempotencyKey", { jobs: [{ input: 0 }, { input: 1, idempotencyKey: "" }] }, /idempotencyKey/],
    ["a bad webhook event", { jobs: [{ input: 0, webhook: { url: "https://x.example", events: ["job.progress"] } }] }, /events/],
    ["jobs not an array", { jobs: { input: 1 } }, /jobs must be array/],
    ["no jobs field", {}, /missing the required field "jobs"/],
    ["an unknown top-level field", { jobs: entries(1), wait: 5 }, /body\.wait is not a field/],
  ];

  it.each(cases)("%s", async (_what, body, message) => {
    for (const query of ["", "?wait=30"]) {
      const res = await s.api("POST", `/v1/queues/fresh/jobs/batch${query}`, body);
      expect([res.status, res.body.error?.code], query).toEqual([400, "ValidationFailed"]);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/); // not a stream, even with ?wait
      expect(res.body.error.message).toMatch(message);
    }
    expect((await s.api("GET", "/v1/queues/fresh")).status).toBe(404); // the queue wasn't even created
    // On a queue that exists, nothing is added to it.
    await s.api("PUT", "/v1/queues/there", {});
    expect((await s.api("POST", "/v1/queues/there/jobs/batch", body)).status).toBe(400);
    expect(await jobsOf("there")).toEqual([]);
  });

  it("a bad ?wait refuses a valid body, and a bad queue name refuses it too", async () => {
    for (const wait of ["61", "-1", "1.5", "soon"]) {
      const res = await s.api("POST", `/v1/queues/fresh/jobs/batch?wait=${wait}`, { jobs: [{ input: 1 }] });
      expect([res.status, res.body.error.code], wait).toEqual([400, "ValidationFailed"]);
      expect(res.body.error.message).toMatch(/wait/);
    }
    expect((await s.api("POST", "/v1/queues/a.b/jobs/batch", { jobs: [{ input: 1 }] })).status).toBe(400);
    expect((await s.api("GET", "/v1/queues/fresh")).status).toBe(404);
  });

  it("100 entries is the limit, and is accepted", async () => {
    const results = await batch("hundred", entries(100));
    expect(results.map((r) => r.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(results.every((r) => r.status === 201)).toBe(true);
    expect(await jobsOf("hundred")).toHaveLength(100);
  });
});

describe("POST /v1/queues/{queue}/jobs/batch?wait=N: NDJSON, a line per entry as its job ends", () => {
  it("streams each line as its job finishes, in the order they finish: the first while the other is still held", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const stream = openBatchStream("q", 30, [
      { input: "slow", priority: 1 },
      { input: "fast", priority: 5 },
    ]);
    await waitFor(async () => (await jobsOf("q")).length === 2, { what: "both entries submitted" });
    // Lease only the faster one (the higher priority), and complete it.
    const [fast] = await lease("q", { max: 1 });
    expect(fast!.input).toBe("fast");
    await s.api("POST", `/v1/jobs/${fast!.id}/complete`, { leaseId: fast!.leaseId, output: "fast done" });

    // Its line arrives while the other entry's job is still queued and its hold open.
    const first = await nextLine(stream, "the first line");
    expect(first).toEqual({ index: 1, status: 201, job: expect.objectContaining({ id: fast!.id, status: "succeeded", output: "fast done", input: "fast" }) });
    const [slow] = await lease("q", { max: 1 });
    expect(slow!.input).toBe("slow");
    expect((await s.api("GET", `/v1/jobs/${slow!.id}`)).body.job.status).toBe("running");

    // The other ends failed (not retryable): its line, then the end of the stream.
    await s.api("POST", `/v1/jobs/${slow!.id}/fail`, { leaseId: slow!.leaseId, error: { message: "bad input" }, retryable: false });
    const second = await nextLine(stream, "the second line");
    expect(second).toEqual({ index: 0, status: 201, job: expect.objectContaining({ id: slow!.id, status: "failed", error: expect.objectContaining({ message: "bad input" }), attempt: 1 }) });
    expect(await nextLine(stream, "the end of the stream")).toBeUndefined();
    await subscribers(0); // nothing left holding on
  });

  it("lines settled in one turn leave as one HTTP chunk (one read for the client, not one per job)", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    // A raw HTTP/1.1 exchange, so the chunked framing itself can be counted.
    const { hostname, port } = new URL(s.url);
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    socket.on("data", (b: Buffer) => received.push(b));
    const ended = once(socket, "end");
    const body = JSON.stringify({ jobs: [{ input: "a" }, { input: "b" }, { input: "c" }] });
    socket.write(
      `POST /v1/queues/q/jobs/batch?wait=30 HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    await waitFor(async () => (await jobsOf("q")).length === 3, { what: "the three entries submitted" });
    const leased = await lease("q", { max: 3 });
    expect(leased).toHaveLength(3);
    // One report completes all three in one write: their lines settle in the same turn.
    const report = await s.api("POST", "/v1/queues/q/leases", { max: 0, complete: leased.map((j) => ({ id: j.id, leaseId: j.leaseId, output: j.input })) });
    expect(report.status).toBe(200);
    await within(5_000, ended, "the stream's end");
    const raw = Buffer.concat(received).toString("utf8");
    const headEnd = raw.indexOf("\r\n\r\n");
    const head = raw.slice(0, headEnd);
    const chunked = raw.slice(headEnd + 4);
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head.toLowerCase()).toContain("transfer-encoding: chunked");
    // The chunks, in order: size line, data, CRLF — until the empty last chunk.
    const chunks: string[] = [];
    for (let rest = chunked; ; ) {
      const eol = rest.indexOf("\r\n");
      expect(eol, `a chunk-size line in ${JSON.stringify(rest.slice(0, 80))}`).toBeGreaterThan(0);
      const size = Number.parseInt(rest.slice(0, eol), 16);
      if (size === 0) break;
      const data = Buffer.from(rest.slice(eol + 2), "utf8").subarray(0, size).toString("utf8");
      chunks.push(data);
      rest = rest.slice(eol + 2 + data.length + 2);
    }
    expect(chunks).toHaveLength(1);
    const lines = chunks[0]!.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Json);
    expect(lines.map((l) => [l.index, l.status, l.job.output]).sort()).toEqual([
      [0, 201, "a"],
      [1, 201, "b"],
      [2, 201, "c"],
    ]);
  });

  it("an entry refused at once (413) answers at once, not after the held ones", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const stream = openBatchStream("q", 30, [{ input: "held" }, { input: tooLong }]);
    const refused = await nextLine(stream, "the refused entry's line");
    expect(refused).toEqual({ index: 1, status: 413, error: { code: "MessageTooLong", message: expect.any(String) } });
    const [held] = await lease("q", { waitSeconds: 20 });
    expect(held!.input).toBe("held");
    await s.api("POST", `/v1/jobs/${held!.id}/complete`, { leaseId: held!.leaseId, output: 1 });
    expect(await nextLine(stream, "the held entry's line")).toMatchObject({ index: 0, status: 201, job: { id: held!.id, status: "succeeded", output: 1 } });
    expect(await nextLine(stream, "the end of the stream")).toBeUndefined();
  });

  it("a replay holds on the earlier job and answers 200: at once if it is terminal, else when it ends; another body answers 422", async () => {
    const done = (await s.api("POST", "/v1/queues/q/jobs", { input: "A" }, { "Idempotency-Key": "k-a" })).body.job;
    const [leasedA] = await lease("q");
    expect(leasedA!.id).toBe(done.id);
    await s.api("POST", `/v1/jobs/${done.id}/complete`, { leaseId: leasedA!.leaseId, output: "A done" });
    const queued = (await s.api("POST", "/v1/queues/q/jobs", { input: "B" }, { "Idempotency-Key": "k-b" })).body.job;

    const stream = openBatchStream("q", 30, [
      { input: "A", idempotencyKey: "k-a" },
      { input: "B", idempotencyKey: "k-b" },
      { input: "not A", idempotencyKey: "k-a" },
    ]);
    const early = [(await nextLine(stream, "a line"))!, (await nextLine(stream, "a line"))!].sort((x, y) => x.index - y.index);
    expect(early).toEqual([
      { index: 0, status: 200, job: expect.objectContaining({ id: done.id, status: "succeeded", output: "A done" }) },
      { index: 2, status: 422, error: { code: "IdempotencyKeyReused", message: expect.any(String) } },
    ]);
    // B's replay is still held, on B itself: nothing new was created.
    expect(await jobsOf("q")).toHaveLength(2);
    const [leasedB] = await lease("q");
    expect(leasedB!.id).toBe(queued.id);
    await s.api("POST", `/v1/jobs/${queued.id}/complete`, { leaseId: leasedB!.leaseId, output: "B done" });
    expect(await nextLine(stream, "the replay's line")).toEqual({ index: 1, status: 200, job: expect.objectContaining({ id: queued.id, status: "succeeded", output: "B done" }) });
    expect(await nextLine(stream, "the end of the stream")).toBeUndefined();
  });

  it("a hold ends when its N seconds pass: the line shows the job as it is", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const baseTimers = s.clock.pendingTimers();
    const stream = openBatchStream("q", 5, [{ input: 1 }, { input: 2 }]);
    await waitFor(() => s.clock.pendingTimers() === baseTimers + 2, { what: "both holds' timers" });
    s.clock.advance(5_000);
    const lines = [(await nextLine(stream, "a line"))!, (await nextLine(stream, "a line"))!].sort((x, y) => x.index - y.index);
    expect(lines).toEqual([
      { index: 0, status: 201, job: expect.objectContaining({ status: "queued", input: 1 }) },
      { index: 1, status: 201, job: expect.objectContaining({ status: "queued", input: 2 }) },
    ]);
    expect(await nextLine(stream, "the end of the stream")).toBeUndefined();
    expect((await jobsOf("q")).map((j) => j.status)).toEqual(["queued", "queued"]);
  });

  it("wait=0 answers one JSON document, as without ?wait", async () => {
    const res = await s.api("POST", "/v1/queues/q/jobs/batch?wait=0", { jobs: [{ input: 1 }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body.results).toMatchObject([{ index: 0, status: 201, job: { status: "queued" } }]);
  });

  it("an SQS DeleteQueue ends every hold at once (clock frozen): each line 404 JobNotFound, then the stream ends, leaving nothing behind", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const baseTimers = s.clock.pendingTimers();
    const stream = openBatchStream("q", 30, [{ input: 1 }, { input: 2 }]);
    await waitFor(async () => (await jobsOf("q")).length === 2, { what: "both entries submitted" });
    await subscribers(2);
    await waitFor(() => s.clock.pendingTimers() === baseTimers + 2, { what: "both holds' timers" });

    expect((await sqsDeleteQueue("q")).status).toBe(200);
    // The clock never moves: the holds' 30 s can't answer them, only the delete can.
    const lines = [(await nextLine(stream, "a line"))!, (await nextLine(stream, "a line"))!].sort((x, y) => x.index - y.index);
    expect(lines).toEqual([
      { index: 0, status: 404, error: { code: "JobNotFound", message: expect.any(String) } },
      { index: 1, status: 404, error: { code: "JobNotFound", message: expect.any(String) } },
    ]);
    expect(await nextLine(stream, "the end of the stream")).toBeUndefined();
    await subscribers(0);
    expect(s.clock.pendingTimers()).toBe(baseTimers);
  });

  it("a client that goes away mid-stream ends its holds (subscriptions and timers dropped, clock frozen); its jobs run on", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const baseTimers = s.clock.pendingTimers();
    const stream = openBatchStream("q", 30, [{ input: "quick", priority: 5 }, { input: "a" }, { input: "b" }]);
    await waitFor(async () => (await jobsOf("q")).length === 3, { what: "every entry submitted" });
    const [quick] = await lease("q", { max: 1 });
    expect(quick!.input).toBe("quick");
    await s.api("POST", `/v1/jobs/${quick!.id}/complete`, { leaseId: quick!.leaseId });
    expect(await nextLine(stream, "the first line")).toMatchObject({ index: 0, status: 201, job: { status: "succeeded" } });
    await subscribers(2);
    await waitFor(() => s.clock.pendingTimers() === baseTimers + 2, { what: "the other holds' timers" });

    stream.abort();
    await subscribers(0);
    await waitFor(() => s.clock.pendingTimers() === baseTimers, { what: "the holds' timers cancelled" });
    // The jobs themselves are untouched: a worker leases and completes them.
    const rest = await lease("q", { max: 5 });
    expect(rest.map((j) => j.input).sort()).toEqual(["a", "b"]);
    for (const job of rest) expect((await s.api("POST", `/v1/jobs/${job.id}/complete`, { leaseId: job.leaseId, output: job.input })).body.job.status).toBe("succeeded");
    expect((await s.api("GET", "/v1/queues/q")).body.queue.stats.jobs).toMatchObject({ queued: 0, running: 0, succeeded: 3 });
  });

  it("a client that goes away before any line ends its holds too", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const baseTimers = s.clock.pendingTimers();
    const stream = openBatchStream("q", 30, [{ input: 1 }, { input: 2 }]);
    await waitFor(async () => (await jobsOf("q")).length === 2, { what: "both entries submitted" });
    await subscribers(2);
    await waitFor(() => s.clock.pendingTimers() === baseTimers + 2, { what: "both holds' timers" });
    stream.abort();
    await subscribers(0);
    await waitFor(() => s.clock.pendingTimers() === baseTimers, { what: "the holds' timers cancelled" });
    expect((await lease("q", { max: 5 })).map((j) => j.input).sort()).toEqual([1, 2]);
  });

  it("SDK run() callers sharing a batch who all give up end its request, and with it the server's holds — as a lone run() does", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const baseTimers = s.clock.pendingTimers();
    const q = new Sluice({ url: s.url }).queue("q");
    const first = new AbortController();
    const second = new AbortController();
    const runs = [q.run(1, { signal: first.signal }), q.run(2, { signal: second.signal })].map((p) => p.catch((e: unknown) => e));
    await subscribers(2);
    first.abort(new Error("first gave up"));
    second.abort(new Error("second gave up"));
    expect(await within(5_000, Promise.all(runs), "the runs")).toEqual([new Error("first gave up"), new Error("second gave up")]);
    // The clock never moves: only the request's end can release the holds.
    await subscribers(0);
    await waitFor(() => s.clock.pendingTimers() === baseTimers, { what: "the holds' timers cancelled" });
    expect((await lease("q", { max: 5 })).map((j) => j.input).sort()).toEqual([1, 2]);
  });

  it("shutdown answers a held stream: the remaining lines with each job as it is, then the stream ends and close() resolves", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const stream = openBatchStream("q", 30, [
      { input: "done", priority: 9 },
      { input: "running", priority: 5 },
      { input: "queued", priority: 1 },
    ]);
    await waitFor(async () => (await jobsOf("q")).length === 3, { what: "every entry submitted" });
    const [done] = await lease("q", { max: 1 });
    expect(done!.input).toBe("done");
    await s.api("POST", `/v1/jobs/${done!.id}/complete`, { leaseId: done!.leaseId, output: "ok" });
    expect(await nextLine(stream, "the first line")).toMatchObject({ index: 0, status: 201, job: { id: done!.id, status: "succeeded" } });
    const [running] = await lease("q", { max: 1 });
    expect(running!.input).toBe("running");
    await subscribers(2);

    const closing = s.server.close();
    const lines = [(await nextLine(stream, "a line at shutdown"))!, (await nextLine(stream, "a line at shutdown"))!].sort((x, y) => x.index - y.index);
    expect(lines).toEqual([
      { index: 1, status: 201, job: expect.objectContaining({ id: running!.id, status: "running", attempt: 1 }) },
      { index: 2, status: 201, job: expect.objectContaining({ input: "queued", status: "queued", attempt: 0 }) },
    ]);
    expect(await nextLine(stream, "the end of the stream")).toBeUndefined();
    await within(10_000, closing, "server close");
  });

  it("a stream whose last line comes once the server already refuses new requests closes its connection, so close() needn't wait out the grace period", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    // The first entry is refused at once: its line opens the stream before shutdown.
    const stream = openBatchStream("q", 30, [{ input: tooLong }, { input: 1 }, { input: 2 }]);
    expect(await nextLine(stream, "the refused entry's line")).toMatchObject({ index: 0, status: 413 });
    await subscribers(2);
    // The holds end at shutdown and each reads its job once more: held here (a slow store, an
    // entry still being created) until the server has gone on to refuse new requests.
    const jobs = s.server.jobs;
    const get = jobs.get.bind(jobs);
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    jobs.get = async (account, id) => {
      await gate;
      return get(account, id);
    };
    const closing = s.server.close();
    await waitFor(async () => (await fetch(`${s.url}/readyz`)).status === 503, { what: "the server to refuse new requests" });
    openGate();
    const lines = [(await nextLine(stream, "a line at shutdown"))!, (await nextLine(stream, "a line at shutdown"))!];
    expect(lines.map((l) => [l.index, l.status]).sort()).toEqual([
      [1, 201],
      [2, 201],
    ]);
    expect(await nextLine(stream, "the end of the stream")).toBeUndefined();
    // Kept alive, the client's pooled connection would hold close() for the 10 s grace period.
    await within(5_000, closing, "server close");
  });

  it("is documented in /openapi.json, with ?wait and both media types", async () => {
    const op = (await s.api("GET", "/openapi.json")).body.paths["/v1/queues/{queue}/jobs/batch"].post;
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: "wait", in: "query" }));
    expect(Object.keys(op.responses["200"].content).sort()).toEqual(["application/json", "application/x-ndjson"]);
    expect(op.requestBody.content["application/json"].schema.properties.jobs).toMatchObject({ minItems: 1, maxItems: 100 });
  });
});

