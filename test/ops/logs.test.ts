/**
 * The server's logs: JSON lines with the events docs/operations.md lists (start, migrations,
 * a line per request at debug, every 5xx and unexpected exception at error with its stack, move
 * tasks, webhook give-ups, shutdown) — and no request body, token or secret in any line.
 */
import { Writable } from "node:stream";
import { CreateQueueCommand, SQSClient, SendMessageCommand } from "@aws-sdk/client-sqs";
import Database from "better-sqlite3";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { configFromEnv, resolveServerConfig } from "../../src/server/config.js";
import { type RunningServer, createLogger, startServer } from "../../src/server/index.js";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { sqsRequest as sqsJson } from "../support/sqs-json.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

/** A pino destination that keeps every line. */
class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    done();
  }
  records(): Array<Record<string, unknown>> {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
  find(msg: string): Array<Record<string, unknown>> {
    return this.records().filter((r) => r.msg === msg);
  }
}

/** Strings that must never appear in a log line, whatever the level. */
const canaries = {
  jsonBody: "CANARY-json-body-7f3a",
  queryBody: "CANARY-query-body-91c2",
  attributeValue: "CANARY-attribute-5d10",
  jobInput: "CANARY-job-input-c0de",
  bearer: "CANARY-bearer-token-a11c",
  sigv4Key: "AKIDCANARY0000000000",
  signature: "CANARYSIGNATURE00ff",
  idempotencyKey: "CANARY-idem-key-4242",
  webhookPath: "CANARY-hook-path-beef",
  webhookSecret: "whsec_Q0FOQVJZY2FuYXJ5Q0FOQVJZY2FuYXJ5Q0FOQVI=",
  unknownRouteQuery: "CANARY-route-query-0ff1",
};

describe("server logs", () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await killAllChildren();
    await removeTempDirs();
  });

  it("log the events an operator needs, and no body, token or secret", async () => {
    const capture = new LogCapture();
    const dataDir = await makeTempDir("sluice-logs-");
    server = await startServer({
      port: 0,
      dataDir,
      webhookSecret: canaries.webhookSecret,
      webhookAllowPrivate: true,
      logger: createLogger({ level: "debug", destination: capture }),
    });
    const url = server.url;
    const auth = {
      authorization: `AWS4-HMAC-SHA256 Credential=${canaries.sigv4Key}/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=${canaries.signature}`,
    };

    const { json: created } = await sqsJson(url, "CreateQueue", { QueueName: "logged" }, auth);
    const queueUrl = created.QueueUrl as string;
    expect((await sqsJson(url, "SendMessage", { QueueUrl: queueUrl, MessageBody: canaries.jsonBody, MessageAttributes: { a: { DataType: "String", StringValue: canaries.attributeValue } } }, auth)).status).toBe(200);
    // The query protocol puts the body in the URL itself.
    const query = new URLSearchParams({ Action: "SendMessage", QueueUrl: queueUrl, MessageBody: canaries.queryBody, Version: "2012-11-05" });
    expect((await fetch(`${url}/?${query}`)).status).toBe(200);
    expect((await sqsJson(url, "ReceiveMessage", { QueueUrl: queueUrl, MaxNumberOfMessages: 10 })).status).toBe(200);
    expect((await sqsJson(url, "GetQueueUrl", { QueueName: "no-such-queue" })).status).toBe(400);

    const submit = await fetch(`${url}/v1/queues/logged-jobs/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${canaries.bearer}`, "idempotency-key": canaries.idempotencyKey },
      // Nothing listens on port 9: the delivery fails at once and is retried later.
      body: JSON.stringify({ input: { text: canaries.jobInput }, webhook: { url: `http://127.0.0.1:9/hooks/${canaries.webhookPath}`, events: ["job.canceled"] } }),
    });
    expect(submit.status).toBe(201);
    const { job } = (await submit.json()) as { job: { id: string } };
    expect((await fetch(`${url}/v1/jobs/${job.id}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await fetch(`${url}/no/such/route?token=${canaries.unknownRouteQuery}`)).status).toBe(404);

    // A real unexpected failure: the table behind ListMessageMoveTasks is gone.
    const dlq = (await sqsJson(url, "CreateQueue", { QueueName: "logged-dlq" })).json.QueueUrl as string;
    await sqsJson(url, "SetQueueAttributes", { QueueUrl: queueUrl, Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: "arn:aws:sqs:us-east-1:000000000000:logged-dlq", maxReceiveCount: 3 }) } });
    const saboteur = new Database(join(dataDir, "sluice.db"));
    saboteur.exec("DROP TABLE move_tasks");
    saboteur.close();
    const failed = await sqsJson(url, "ListMessageMoveTasks", { SourceArn: "arn:aws:sqs:us-east-1:000000000000:logged-dlq" });
    expect(failed.status).toBe(500);
    expect(dlq).toContain("logged-dlq");

    await waitFor(() => capture.find("webhook delivery failed; will retry").length > 0, { what: "the failed webhook attempt to be logged" });
    await server.close();
    server = undefined;

    const records = capture.records(); // every line is JSON
    const start = capture.find(`Sluice listening on ${url}`)[0];
    expect(start).toMatchObject({ level: "info", store: "sqlite", dataDir, address: url, durability: expect.stringContaining("fsync") });
    expect(start!.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(capture.find("schema migration applied").map((r) => r.migration)).toContain("001_queues_and_messages.sql");

    const requests = capture.find("request");
    expect(requests).toContainEqual(expect.objectContaining({ level: "debug", protocol: "sqs_json", action: "SendMessage", queue: "logged", status: 200, durationMs: expect.any(Number) }));
    expect(requests).toContainEqual(expect.objectContaining({ protocol: "sqs_query", action: "SendMessage", queue: "logged", status: 200 }));
    expect(requests).toContainEqual(expect.objectContaining({ protocol: "sqs_json", action: "GetQueueUrl", status: 400, code: "QueueDoesNotExist" }));
    expect(requests).toContainEqual(expect.objectContaining({ protocol: "jobs", action: "POST /v1/queues/:queue/jobs", queue: "logged-jobs", status: 201 }));
    expect(requests).toContainEqual(expect.objectContaining({ protocol: "http", action: "GET (no route)", status: 404 }));

    const unexpected = capture.find("unexpected error")[0];
    expect(unexpected?.level).toBe("error");
    expect((unexpected?.err as { stack?: string }).stack).toMatch(/no such table: move_tasks[\s\S]*\n\s+at /);
    expect(capture.find("request failed")).toContainEqual(expect.objectContaining({ level: "error", action: "ListMessageMoveTasks", status: 500, code: "InternalError" }));

    expect(capture.find("webhook delivery failed; will retry")[0]).toMatchObject({ level: "debug", jobId: job.id, host: "127.0.0.1:9", attempts: 1 });
    expect(capture.find("shutting down: refusing new requests, answering those in flight")).toHaveLength(1);
    expect(capture.find("shut down: requests answered, store closed")[0]).toMatchObject({ level: "info", durationMs: expect.any(Number) });
    expect(records.length).toBeGreaterThan(10);

    const all = capture.lines.join("\n");
    for (const [name, canary] of Object.entries(canaries)) expect(all.includes(canary), `${name} leaked into the log`).toBe(false);
  });

  it("name each request's and webhook attempt's account next to its queue, where one is known", async () => {
    const [accountA, accountB] = ["111111111111", "222222222222"];
    const tokenA = "tok-logs-operator-0123456789ab";
    const tokenB = "tok-logs-tenant-b-0123456789ab";
    const capture = new LogCapture();
    const dataDir = await makeTempDir("sluice-logs-accounts-");
    const credentialsFile = join(await makeTempDir("sluice-logs-credentials-"), "credentials.toml");
    await writeFile(
      credentialsFile,
      `[[keys]]\naccessKeyId = "AKIDLOGSB"\nsecretAccessKey = "logs-secret-b-0123456789abcdef"\naccountId = "${accountB}"\n\n` +
        `[[tokens]]\nname = "operator"\ntoken = "${tokenA}"\naccountId = "${accountA}"\n\n[[tokens]]\nname = "tenant-b"\ntoken = "${tokenB}"\naccountId = "${accountB}"\n`,
    );
    server = await startServer({ port: 0, dataDir, accountId: accountA, credentialsFile, webhookAllowPrivate: true, logger: createLogger({ level: "debug", destination: capture }) });
    const url = server.url;
    const jobsCall = (path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> =>
      fetch(`${url}${path}`, { method: body === undefined ? "GET" : "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });

    // B's SQS key on B's queue.
    const sqs = new SQSClient({ endpoint: url, region: "us-east-1", credentials: { accessKeyId: "AKIDLOGSB", secretAccessKey: "logs-secret-b-0123456789abcdef" }, maxAttempts: 1 });
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "orders" }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "hi" }));
    sqs.destroy();
    // An unsigned SQS request is refused before any account is known.
    expect((await sqsJson(url, "SendMessage", { QueueUrl, MessageBody: "x" })).status).toBe(403);
    // B's job with a webhook nobody answers (port 9), the operator's own job, and the operator acting for B.
    const submitted = await jobsCall("/v1/queues/orders-jobs/jobs", tokenB, { input: 1, webhook: { url: "http://127.0.0.1:9/hook", events: ["job.canceled"] } });
    const { job } = (await submitted.json()) as { job: { id: string } };
    expect((await jobsCall(`/v1/jobs/${job.id}/cancel`, tokenB, {})).status).toBe(200);
    expect((await jobsCall("/v1/queues/own-jobs/jobs", tokenA, { input: 2 })).status).toBe(201);
    expect((await jobsCall("/v1/queues/orders-jobs/jobs", tokenA, undefined, { "sluice-account": accountB })).status).toBe(200);
    expect((await jobsCall("/openapi.json", tokenA)).status).toBe(200);
    await waitFor(() => capture.find("webhook delivery failed; will retry").length > 0, { what: "the failed webhook attempt to be logged" });

    const requests = capture.find("request");
    expect(requests).toContainEqual(expect.objectContaining({ protocol: "sqs_json", action: "CreateQueue", queue: "orders", account: accountB, status: 200 }));
    expect(requests).toContainEqual(expect.objectContaining({ protocol: "sqs_json", action: "SendMessage", queue: "orders", account: accountB, status: 200 }));
    expect(requests.find((r) => r.protocol === "sqs_json" && r.status === 403)).not.toHaveProperty("account");
    expect(requests).toContainEqual(expect.objectContaining({ protocol: "jobs", action: "POST /v1/queues/:queue/jobs", queue: "orders-jobs", account: accountB, status: 201 }));
    expect(requests).toContainEqual(expect.objectContaining({ protocol: "jobs", action: "POST /v1/jobs/:id/cancel", account: accountB, status: 200 }));
    expect(requests).toContainEqual(expect.objectContaining({ protocol: "jobs", action: "POST /v1/queues/:queue/jobs", queue: "own-jobs", account: accountA, status: 201 }));
    expect(requests).toContainEqual(expect.objectContaining({ protocol: "jobs", action: "GET /v1/queues/:queue/jobs", queue: "orders-jobs", account: accountB, status: 200 }));
    expect(requests.find((r) => r.action === "GET /openapi.json")).not.toHaveProperty("account");
    expect(capture.find("webhook delivery failed; will retry")[0]).toMatchObject({ jobId: job.id, queue: "orders-jobs", account: accountB });
  });

  it("log move tasks starting and finishing", async () => {
    const capture = new LogCapture();
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-logs-"), logger: createLogger({ level: "info", destination: capture }) });
    const url = server.url;
    const source = (await sqsJson(url, "CreateQueue", { QueueName: "src" })).json.QueueUrl as string;
    await sqsJson(url, "CreateQueue", { QueueName: "src-dlq", Attributes: {} });
    await sqsJson(url, "SetQueueAttributes", { QueueUrl: source, Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: "arn:aws:sqs:us-east-1:000000000000:src-dlq", maxReceiveCount: 1 }) } });
    const dlq = (await sqsJson(url, "GetQueueUrl", { QueueName: "src-dlq" })).json.QueueUrl as string;
    await sqsJson(url, "SendMessage", { QueueUrl: dlq, MessageBody: "m" });
    const { json } = await sqsJson(url, "StartMessageMoveTask", { SourceArn: "arn:aws:sqs:us-east-1:000000000000:src-dlq", DestinationArn: "arn:aws:sqs:us-east-1:000000000000:src" });
    await waitFor(() => capture.find("move task finished").length > 0, { what: "the move task to finish" });
    expect(capture.find("move task started")[0]).toMatchObject({ level: "info", taskHandle: json.TaskHandle, source: "src-dlq", destination: "src", status: "RUNNING" });
    expect(capture.find("move task finished")[0]).toMatchObject({ level: "info", taskHandle: json.TaskHandle, status: "COMPLETED", movedCount: 1 });
    // Not at debug: no request lines.
    expect(capture.find("request")).toHaveLength(0);
  });

  it("read the level from --log-level or SLUICE_LOG_LEVEL, and refuse an unknown one", () => {
    expect(resolveServerConfig().logLevel).toBe("info");
    expect(resolveServerConfig(configFromEnv({ SLUICE_LOG_LEVEL: "debug" })).logLevel).toBe("debug");
    expect(() => configFromEnv({ SLUICE_LOG_LEVEL: "verbose" })).toThrow(/SLUICE_LOG_LEVEL: log level must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"/);
  });

  it("are JSON lines when piped and pretty on a terminal", async () => {
    const pretty = new LogCapture();
    createLogger({ level: "info", pretty: true, destination: pretty }).info({ queue: "q" }, "hello operator");
    await waitFor(() => pretty.lines.length > 0, { what: "the pretty line" });
    expect(pretty.lines[0]).toMatch(/INFO.*hello operator/);
    expect(() => JSON.parse(pretty.lines[0]!)).toThrow();

    const cli = await spawnCli({ dataDir: await makeTempDir("sluice-logs-cli-"), extraArgs: ["--log-level", "debug"] });
    await fetch(`${cli.url}/healthz`);
    await waitFor(() => cli.stdout().includes('"action":"GET /healthz"'), { what: "the request line" });
    for (const line of cli.stdout().split("\n").filter(Boolean)) expect(JSON.parse(line)).toHaveProperty("level");
  });
});
