/**
 * What a request that arrives while the server shuts down is answered: each protocol refuses it
 * in its own error shape, with a code its clients retry (503 ServiceUnavailable), carries nothing
 * out, and closes the connection. (fastify's own answer, `{"error":"Service Unavailable",…}`, is
 * a body no SQS client or SDK understands; the SQS fast path used to carry such a request out.)
 */
import { ReceiveMessageCommand, SQSClient, type SQSServiceException } from "@aws-sdk/client-sqs";
import { Agent } from "node:http";
import { type AddressInfo, type Socket, connect } from "node:net";
import { join } from "node:path";
import AWS from "aws-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { openApiProblem } from "../jobs/openapi-answers.js";
import { Sluice, SluiceApiError, type Timers } from "../../client/src/index.js";
import { ManualClock } from "../../src/core/clock.js";
import { JobService } from "../../src/core/jobs/job-service.js";
import { ScheduleService } from "../../src/core/schedules/schedule-service.js";
import { BatchService, FileService, batchJobsOf } from "../../src/core/index.js";
import { scheduleRunJobs } from "../../src/core/schedules/schedule-run-jobs.js";
import { cronCompiler } from "../../src/server/cron.js";
import { QueueService } from "../../src/core/queue-service.js";
import { buildApp } from "../../src/server/app.js";
import { cryptoIdSource } from "../../src/server/ids.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { credentials, region } from "../support/clients.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor, within } from "../support/wait.js";
import { xmlText } from "./sqs-harness.js";

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await removeTempDirs();
});

/**
 * A request whose head is sent but for its blank line: the server has begun reading it (so
 * close() waits for it, as for any request in flight) but can't act on it until `finish()`.
 * The answer is read to the connection's end: answers during shutdown close it.
 */
async function startRequest(port: number, method: string, path: string, headers: Record<string, string>, body: string): Promise<{ finish(): Promise<RawAnswer> }> {
  const socket: Socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  cleanups.push(() => void socket.destroy());
  let received = "";
  socket.setEncoding("latin1").on("data", (d: string) => (received += d));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  const all = { host: `127.0.0.1:${port}`, "content-length": String(Buffer.byteLength(body)), ...headers };
  socket.write(`${method} ${path} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join("")}`);
  return {
    async finish() {
      // Not end(): a client that half-closes its side has its request dropped by node:http.
      socket.write(`\r\n${body}`);
      await within(5_000, closed, `the answer to ${method} ${path}`);
      const headEnd = received.indexOf("\r\n\r\n");
      const [statusLine, ...lines] = received.slice(0, headEnd).split("\r\n");
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      return { status: Number(statusLine!.split(" ")[1]), headers, body: Buffer.from(received.slice(headEnd + 4), "latin1").toString("utf8") };
    },
  };
}

const jsonTarget = (action: string): Record<string, string> => ({ "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}` });
const shuttingDownMessage = "The server is shutting down and did not carry out the request; retry it.";

describe("requests arriving during shutdown", () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("are refused in their protocol's own error shape with 503 ServiceUnavailable, carried out by none, each closing its connection", async () => {
    const dataDir = await makeTempDir("sluice-shutdown-");
    server = await startServer({ port: 0, dataDir });
    const running = server;
    await running.queues.createQueue("", { name: "q" });
    const queueUrl = `${running.url}/000000000000/q`;
    const openApi = (await (await fetch(`${running.url}/openapi.json`, { headers: { connection: "close" } })).json()) as unknown;
    const accepted: Socket[] = [];
    running.app.server.on("connection", (socket: Socket) => accepted.push(socket));
    const send = JSON.stringify({ QueueUrl: queueUrl, MessageBody: "during shutdown" });
    const requests = {
      // POST / with X-Amz-Target: the node:http fast path, ahead of fastify.
      jsonFastPath: await startRequest(running.port, "POST", "/", jsonTarget("SendMessage"), send),
      // The same on the queue URL path: fastify's SQS route.
      jsonQueuePath: await startRequest(running.port, "POST", "/000000000000/q", jsonTarget("SendMessage"), JSON.stringify({ MessageBody: "during shutdown" })),
      query: await startRequest(running.port, "POST", "/", { "content-type": "application/x-www-form-urlencoded" }, new URLSearchParams({ Action: "SendMessage", Version: "2012-11-05", QueueUrl: queueUrl, MessageBody: "during shutdown" }).toString()),
      jobsSubmit: await startRequest(running.port, "POST", "/v1/queues/jq/jobs", { "content-type": "application/json" }, JSON.stringify({ input: { n: 1 } })),
      jobsLease: await startRequest(running.port, "POST", "/v1/queues/jq/leases", { "content-type": "application/json" }, JSON.stringify({ max: 10, waitSeconds: 20 })),
      readyz: await startRequest(running.port, "GET", "/readyz", {}, ""),
    };
    // Shutdown drops a connection the server has read nothing from: each head must be in first.
    await waitFor(() => accepted.length === Object.keys(requests).length && accepted.every((socket) => socket.bytesRead > 0), { what: "the server to read every request's head" });

    const closed = running.close();
    // New requests are refused once /readyz says shutting-down; the listener stays open until
    // these, in flight, are answered (then the server closes).
    await waitFor(async () => ((await (await fetch(`${running.url}/readyz`, { headers: { connection: "close" } })).json()) as { status: string }).status === "shutting-down", {
      what: "the server to refuse new requests",
    });
    expect(running.app.server.listening).toBe(true);
    const answers = Object.fromEntries(await Promise.all(Object.entries(requests).map(async ([name, r]) => [name, await r.finish()] as const)));
    await within(5_000, closed, "close()");

    // Every answer at a glance first (so a failure shows them all), then each shape in full.
    const errorCode = (a: RawAnswer): string | undefined => {
      if (a.headers["content-type"] === "text/xml") return xmlText(a.body, "Code");
      const body = JSON.parse(a.body || "null") as { __type?: string; error?: { code?: string } | string; status?: string } | null;
      return body?.__type ?? (typeof body?.error === "object" ? body.error.code : body?.status);
    };
    const summary = Object.fromEntries(
      Object.entries(answers).map(([name, a]) => [name, { status: a.status, code: errorCode(a), connection: a.headers.connection, retryAfter: a.headers["retry-after"] }]),
    );
    // Retry-After: 1 — clients that honour it (the SDK does) come back once a restart is likely done.
    const refused = (code: string) => ({ status: 503, code, connection: "close", retryAfter: "1" });
    expect(summary).toEqual({
      jsonFastPath: refused("com.amazonaws.sqs#ServiceUnavailable"),
      jsonQueuePath: refused("com.amazonaws.sqs#ServiceUnavailable"),
      query: refused("ServiceUnavailable"),
      jobsSubmit: refused("ServiceUnavailable"),
      jobsLease: refused("ServiceUnavailable"),
      // The health routes answer as ever: not ready.
      readyz: { ...refused("shutting-down"), retryAfter: undefined },
    });
    for (const name of ["jsonFastPath", "jsonQueuePath"]) {
      const a = answers[name]!;
      expect(JSON.parse(a.body), name).toEqual({ __type: "com.amazonaws.sqs#ServiceUnavailable", message: shuttingDownMessage });
      expect(a.headers["x-amzn-query-error"], name).toBe("ServiceUnavailable;Receiver");
      expect(a.headers["content-type"], name).toBe("application/x-amz-json-1.0");
    }
    expect(answers.query!.body).toMatch(/^<\?xml [^>]*\?>\n<ErrorResponse xmlns="http:\/\/queue.amazonaws.com\/doc\/2012-11-05\/"><Error><Type>Receiver<\/Type><Code>ServiceUnavailable<\/Code>/);
    expect(xmlText(answers.query!.body, "Message")).toBe(shuttingDownMessage);
    for (const name of ["jobsSubmit", "jobsLease"]) {
      expect(JSON.parse(answers[name]!.body), name).toEqual({ error: { code: "ServiceUnavailable", message: shuttingDownMessage } });
    }
    // /openapi.json documents them (its `default` answer of every route).
    for (const [name, method, url] of [["jobsSubmit", "POST", "/v1/queues/jq/jobs"], ["jobsLease", "POST", "/v1/queues/jq/leases"]] as const) {
      const a = answers[name]!;
      expect(openApiProblem(openApi, { method, url, status: a.status, contentType: a.headers["content-type"] ?? null, body: JSON.parse(a.body) }), name).toBeUndefined();
    }

    // Nothing was carried out: no message sent, no job queue made.
    server = await startServer({ port: 0, dataDir });
    expect(await server.queues.queueStats(await server.queues.getQueue("", "q"))).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    expect((await server.queues.listQueues("", {})).queues.map((q) => q.name)).toEqual(["q"]);
  });
});

/** The real app on a socket, its shutdown signal already aborted (but not closed: it still listens). */
async function shuttingDownApp(): Promise<{ url: string; requests: () => number }> {
  const dir = await makeTempDir("sluice-shutdown-");
  const store = openSqliteStore({ filename: join(dir, "sluice.db") });
  const clock = new ManualClock();
  const ids = cryptoIdSource();
  const queues = new QueueService({ store, clock, ids, senderId: "000000000000" });
  const jobs = new JobService({ store, queues, clock, ids, senderId: "000000000000" });
  const schedules = new ScheduleService({ store, clock, cron: cronCompiler, runs: scheduleRunJobs(jobs) });
  const files = new FileService({ store, clock, ids });
  const batches = new BatchService({ store, files, jobs: batchJobsOf(jobs), clock, ids });
  const shutdown = new AbortController();
  const unexpected: unknown[] = [];
  const app = buildApp({ queues, accountId: "000000000000", region, shutdownSignal: shutdown.signal, onUnexpectedError: (e) => unexpected.push(e), jobs: { jobs, schedules, files, batches, clock, webhookPolicy: { allowPrivate: true }, version: "0.0.0-test" } });
  await queues.createQueue("", { name: "q" });
  await app.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(async () => {
    jobs.close();
    queues.waiters.closeAll();
    await app.close();
    await store.close();
    expect(unexpected).toEqual([]);
  });
  let requests = 0;
  app.server.on("request", () => requests++);
  shutdown.abort();
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, requests: () => requests };
}

describe("clients of a shutting-down server", () => {
  it("retry the refusal: AWS SDK v3 (JSON, fast path), v2 (query) and the Sluice SDK, then report ServiceUnavailable", async () => {
    const server = await shuttingDownApp();
    const queueUrl = `${server.url}/000000000000/q`;

    // v3 retries 503s (transient, by status) — here once.
    const v3 = new SQSClient({ endpoint: server.url, region, credentials, maxAttempts: 2 });
    cleanups.push(() => v3.destroy());
    const v3Error = (await v3.send(new ReceiveMessageCommand({ QueueUrl: queueUrl })).catch((e: unknown) => e)) as SQSServiceException;
    expect({ name: v3Error.name, status: v3Error.$metadata?.httpStatusCode, fault: v3Error.$fault, attempts: v3Error.$metadata?.attempts }).toEqual({ name: "ServiceUnavailable", status: 503, fault: "server", attempts: 2 });
    expect(server.requests()).toBe(2);

    // v2 marks every 5xx retryable.
    const agent = new Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    const v2 = new AWS.SQS({ endpoint: server.url, region, credentials: new AWS.Credentials(credentials), apiVersion: "2012-11-05", maxRetries: 1, retryDelayOptions: { customBackoff: () => 0 }, httpOptions: { agent } });
    const v2Error = (await v2.receiveMessage({ QueueUrl: queueUrl }).promise().catch((e: unknown) => e)) as AWS.AWSError;
    expect({ code: v2Error.code, status: v2Error.statusCode, retryable: v2Error.retryable }).toEqual({ code: "ServiceUnavailable", status: 503, retryable: true });
    expect(server.requests()).toBe(4);

    // The Sluice SDK retries 503s as it does any transient status.
    const sluice = new Sluice({ url: server.url, attempts: 3, random: () => 0 });
    const sdkError = await sluice.jobs.get("some-job").catch((e: unknown) => e);
    expect(sdkError).toBeInstanceOf(SluiceApiError);
    expect(sdkError).toMatchObject({ code: "ServiceUnavailable", status: 503, message: shuttingDownMessage });
    expect(server.requests()).toBe(7);
  });

  it("the Sluice SDK waits the 503's Retry-After before sending again — a batch of one turn's submits as a lone submit", async () => {
    const server = await shuttingDownApp();
    // Timers that fire only when fired here: each retry's wait is seen, none passes by itself.
    const waits: Array<{ delayMs: number; fire: () => void }> = [];
    const timers: Timers = {
      nowMs: () => 1_000_000,
      schedule(delayMs, fn) {
        const entry = { delayMs, fire: fn };
        // Request timeouts (30 s and more) are not retry waits.
        if (delayMs < 30_000) waits.push(entry);
        return () => {
          const i = waits.indexOf(entry);
          if (i >= 0) waits.splice(i, 1);
        };
      },
    };
    const q = new Sluice({ url: server.url, attempts: 2, timers, random: () => 0.5 }).queue("q");

    const lone = q.submit("alone").catch((e: unknown) => e);
    await waitFor(() => waits.length === 1, { what: "the lone submit's retry wait" });
    expect(waits[0]!.delayMs).toBe(1_000);
    waits.shift()!.fire();
    expect(await within(5_000, lone, "the lone submit")).toMatchObject({ code: "ServiceUnavailable", status: 503 });

    const batched = [q.submit("a"), q.submit("b")].map((p) => p.catch((e: unknown) => e));
    await waitFor(() => waits.length === 1, { what: "the batch's retry wait" });
    expect(waits[0]!.delayMs).toBe(1_000);
    waits.shift()!.fire();
    for (const err of await within(5_000, Promise.all(batched), "the batched submits")) expect(err).toMatchObject({ code: "ServiceUnavailable", status: 503 });
    // 2 attempts each: the lone submit's, then the batch's.
    expect(server.requests()).toBe(4);
  });
});
