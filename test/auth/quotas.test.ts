/**
 * Per-account quotas through a real server and the real clients (@aws-sdk/client-sqs v3 on JSON,
 * aws-sdk v2 on query) and the jobs API: the queue count (flags, for the server's own account),
 * messages and bytes a queue holds and requests a second (the credentials file, per account).
 * Each refusal carries the code SQS uses for the limit and changes nothing; the rate recovers as
 * the injected clock moves; /metrics shows the limits and the refusals.
 */
import { CreateQueueCommand, ListQueuesCommand, ReceiveMessageCommand, DeleteMessageCommand, SQSClient, SendMessageBatchCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import AWS from "aws-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { CredentialsError, credentialsFrom } from "../../src/server/credentials-file.js";
import { ConfigError, parseQuota } from "../../src/server/config.js";
import { sample } from "../support/metrics-text.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { v2ErrorOf, v3ErrorOf } from "../support/sqs-errors.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { writeCredentials } from "./fixtures.js";

const own = "111111111111";
const holder = "222222222222";
const chatty = "333333333333";
const keyOf = (account: string) => ({ accessKeyId: `AKIDQUOTA${account.slice(0, 1)}`, secretAccessKey: `quota-secret-${account}-abcdef` });
const tokenOf = (account: string): string => `tok-quota-${account}-abcdef`;

let srv: TestServer;
const clock = new ManualClock(Date.UTC(2026, 10, 28));

const v3 = (account: string): SQSClient => new SQSClient({ endpoint: srv.url, region: "us-east-1", credentials: keyOf(account), maxAttempts: 1 });
const v2 = (account: string): AWS.SQS => new AWS.SQS({ endpoint: srv.url, region: "us-east-1", credentials: new AWS.Credentials(keyOf(account)), maxRetries: 0, apiVersion: "2012-11-05" });
const urlOf = (account: string, name: string): string => `${srv.url}/${account}/${name}`;

const v3Error = (account: string, command: object) => v3ErrorOf(v3(account), command);
const v2Error = v2ErrorOf;

function jobs(account: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${srv.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${tokenOf(account)}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function queueNames(account: string): Promise<string[]> {
  const { QueueUrls } = await v3(account).send(new ListQueuesCommand({}));
  return (QueueUrls ?? []).map((u) => u.slice(u.lastIndexOf("/") + 1)).sort();
}

beforeAll(async () => {
  const dir = await makeTempDir("sluice-quotas-");
  const lines: string[] = [];
  for (const account of [own, holder, chatty]) {
    lines.push("[[keys]]", `accessKeyId = "${keyOf(account).accessKeyId}"`, `secretAccessKey = "${keyOf(account).secretAccessKey}"`, `accountId = "${account}"`, "");
    lines.push("[[tokens]]", `name = "t${account.slice(0, 1)}"`, `token = "${tokenOf(account)}"`, `accountId = "${account}"`, "");
  }
  lines.push("[[accounts]]", `id = "${holder}"`, "maxMessagesPerQueue = 3", "maxBytesPerQueue = 40", "");
  lines.push("[[accounts]]", `id = "${chatty}"`, "requestsPerSecond = 3", "");
  const credentialsFile = await writeCredentials(dir, "credentials.toml", lines.join("\n"));
  srv = await startTestServer({ clock, config: { credentialsFile, accountId: own, maxQueues: 3 } });
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

describe("quotas per account", () => {
  it("refuses a queue past the account's maxQueues with OverLimit on both protocols and the jobs API, creating nothing", async () => {
    await v3(own).send(new CreateQueueCommand({ QueueName: "q1" }));
    await v3(own).send(new CreateQueueCommand({ QueueName: "q2" }));
    // An existing queue is answered as it is, at the quota or not.
    await v3(own).send(new CreateQueueCommand({ QueueName: "q2" }));
    await v3(own).send(new CreateQueueCommand({ QueueName: "q3" }));
    const json = await v3Error(own, new CreateQueueCommand({ QueueName: "q4" }));
    expect(json).toMatchObject({ name: "OverLimit", status: 403 });
    expect(json.message).toContain("its quota is 3");
    expect(await v2Error(v2(own).createQueue({ QueueName: "q4" }))).toEqual({ code: "OverLimit", statusCode: 403 });
    // A submit would create the queue and its dead-letter queue: refused before either.
    const submit = await jobs(own, "/v1/queues/fresh/jobs", { input: {} });
    expect(submit.status).toBe(429);
    expect(((await submit.json()) as { error: { code: string } }).error.code).toBe("OverLimit");
    expect(await queueNames(own)).toEqual(["q1", "q2", "q3"]);
  });

  it("refuses sends past maxMessagesPerQueue with OverLimit, and takes them again once messages are deleted", async () => {
    await v3(holder).send(new CreateQueueCommand({ QueueName: "small" }));
    const url = urlOf(holder, "small");
    await v3(holder).send(new SendMessageBatchCommand({ QueueUrl: url, Entries: ["a", "b"].map((b) => ({ Id: b, MessageBody: b })) }));
    // A batch that would overfill the queue is refused whole: nothing of it is written.
    expect(await v3Error(holder, new SendMessageBatchCommand({ QueueUrl: url, Entries: ["c", "d"].map((b) => ({ Id: b, MessageBody: b })) }))).toMatchObject({ name: "OverLimit", status: 403 });
    await v3(holder).send(new SendMessageCommand({ QueueUrl: url, MessageBody: "c" }));
    const refused = await v3Error(holder, new SendMessageCommand({ QueueUrl: url, MessageBody: "d" }));
    expect(refused).toMatchObject({ name: "OverLimit", status: 403 });
    expect(refused.message).toContain("holds 3 messages");
    expect(await v2Error(v2(holder).sendMessage({ QueueUrl: url, MessageBody: "d" }))).toEqual({ code: "OverLimit", statusCode: 403 });
    const submit = await jobs(holder, "/v1/queues/small/jobs", { input: { n: 1 } });
    expect(submit.status).toBe(429);
    // In flight still counts; deleted does not.
    const { Messages } = await v3(holder).send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
    expect(Messages!.map((m) => m.Body).sort()).toEqual(["a", "b", "c"]);
    expect(await v3Error(holder, new SendMessageCommand({ QueueUrl: url, MessageBody: "d" }))).toMatchObject({ name: "OverLimit" });
    await v3(holder).send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: Messages![0]!.ReceiptHandle! }));
    await v3(holder).send(new SendMessageCommand({ QueueUrl: url, MessageBody: "d" }));
  });

  it("refuses a send past maxBytesPerQueue (UTF-8 bytes of bodies) with OverLimit", async () => {
    await v3(holder).send(new CreateQueueCommand({ QueueName: "bytes" }));
    const url = urlOf(holder, "bytes");
    await v3(holder).send(new SendMessageCommand({ QueueUrl: url, MessageBody: "é".repeat(15) })); // 30 bytes
    const refused = await v3Error(holder, new SendMessageCommand({ QueueUrl: url, MessageBody: "x".repeat(11) }));
    expect(refused).toMatchObject({ name: "OverLimit", status: 403 });
    expect(refused.message).toContain("40 bytes");
    await v3(holder).send(new SendMessageCommand({ QueueUrl: url, MessageBody: "x".repeat(10) }));
  });

  it("throttles past requestsPerSecond: RequestThrottled on SQS, 429 RateLimited with Retry-After on the jobs API, until time passes", async () => {
    await v3(chatty).send(new CreateQueueCommand({ QueueName: "busy" }));
    await v3(chatty).send(new SendMessageCommand({ QueueUrl: urlOf(chatty, "busy"), MessageBody: "1" }));
    await v3(chatty).send(new SendMessageCommand({ QueueUrl: urlOf(chatty, "busy"), MessageBody: "2" }));
    expect(await v3Error(chatty, new SendMessageCommand({ QueueUrl: urlOf(chatty, "busy"), MessageBody: "3" }))).toMatchObject({ name: "RequestThrottled", status: 403 });
    expect(await v2Error(v2(chatty).sendMessage({ QueueUrl: urlOf(chatty, "busy"), MessageBody: "3" }))).toEqual({ code: "RequestThrottled", statusCode: 403 });
    const res = await jobs(chatty, "/v1/queues/busy/jobs", { input: {} });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("RateLimited");
    // Other accounts are not slowed by it.
    await v3(holder).send(new ListQueuesCommand({}));
    clock.advance(1000);
    const { Messages } = await v3(chatty).send(new ReceiveMessageCommand({ QueueUrl: urlOf(chatty, "busy"), MaxNumberOfMessages: 10 }));
    // The refused sends wrote nothing.
    expect(Messages!.map((m) => m.Body).sort()).toEqual(["1", "2"]);
  });

  it("shows each account's limits and refusals in /metrics", async () => {
    const res = await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${tokenOf(own)}` } });
    const text = await res.text();
    expect(sample(text, "sluice_account_quota", { account: own, quota: "maxQueues" })).toBe(3);
    expect(sample(text, "sluice_account_quota", { account: holder, quota: "maxMessagesPerQueue" })).toBe(3);
    expect(sample(text, "sluice_account_quota", { account: holder, quota: "maxBytesPerQueue" })).toBe(40);
    expect(sample(text, "sluice_account_quota", { account: chatty, quota: "requestsPerSecond" })).toBe(3);
    expect(sample(text, "sluice_quota_refusals_total", { account: own, quota: "maxQueues" })).toBe(3);
    expect(sample(text, "sluice_quota_refusals_total", { account: holder, quota: "maxMessagesPerQueue" })).toBeGreaterThanOrEqual(4);
    expect(sample(text, "sluice_quota_refusals_total", { account: holder, quota: "maxBytesPerQueue" })).toBe(1);
    expect(sample(text, "sluice_quota_refusals_total", { account: chatty, quota: "requestsPerSecond" })).toBe(3);
  });
});

describe("quota settings", () => {
  const base = { tokens: [{ name: "t", token: "tok-0123456789abcdef" }] };
  it("takes whole numbers of at least 1 in [[accounts]] and refuses anything else, naming the field", () => {
    const ok = credentialsFrom({ ...base, accounts: [{ id: holder, maxQueues: 5, requestsPerSecond: 100 }] }, "c.toml", {}, own);
    expect(ok.accounts.get(holder)?.quotas).toEqual({ maxQueues: 5, requestsPerSecond: 100 });
    expect(() => credentialsFrom({ ...base, accounts: [{ id: holder, maxQueues: 0 }] }, "c.toml", {}, own)).toThrow(new CredentialsError("c.toml: accounts[0]: maxQueues must be a whole number of at least 1."));
    expect(() => credentialsFrom({ ...base, accounts: [{ id: holder, maxBytesPerQueue: "1k" }] }, "c.toml", {}, own)).toThrow(/accounts\[0\]: maxBytesPerQueue must be a whole number/);
    expect(() => credentialsFrom({ ...base, accounts: [{ id: holder, maxQueue: 5 }] }, "c.toml", {}, own)).toThrow(/unknown field "maxQueue"/);
  });

  it("refuses a flag or variable that is not a whole number of at least 1", () => {
    expect(parseQuota("250", "--requests-per-second")).toBe(250);
    expect(() => parseQuota("0", "--max-queues")).toThrow(new ConfigError('--max-queues: expected a whole number of at least 1, got "0".'));
    expect(() => parseQuota("1.5", "SLUICE_MAX_BYTES_PER_QUEUE")).toThrow(ConfigError);
  });
});
