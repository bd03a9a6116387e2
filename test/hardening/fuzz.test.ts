/**
 * A bounded, seeded fuzz campaign over a real server: a few thousand malformed requests across
 * both SQS protocols, the jobs API and unknown routes. Every answer must be below 500 and coded in
 * its API's documented shape (SQS `__type` + `x-amzn-query-error`, query `<Code>`, or
 * `{"error":{"code"}}`); the server must report no unexpected error and still answer; canary
 * messages and jobs written before the campaign must come out intact. Set FUZZ_SEED to replay.
 */
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Secret } from "../../src/protocols/auth/principal.js";
import { createLogger } from "../../src/server/index.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { type FuzzAnswer, type FuzzRequest, Fuzzer, codeOf, seededRandom } from "./fuzz-inputs.js";

const seed = Number(process.env.FUZZ_SEED ?? 20261126);
const requestsOpen = 3_000;
const requestsAuthenticated = 500;
const queueNames = ["fz", "fz-a", "fz-b.fifo", "fz_c", "fz-dlq"];
const canaryBody = "canary: é ü 😀 \u000d\u0009 <xml> & \"quotes\"";

let agent: Agent;
/** What the servers logged at error level (unexpected errors, 5xx): the campaign must cause none. */
const unexpected: string[] = [];
const logger = createLogger({ level: "error", destination: { write: (line: string) => void unexpected.push(line) } });

beforeAll(() => {
  agent = new Agent({ connections: 16, bodyTimeout: 30_000, headersTimeout: 30_000 });
});
afterAll(async () => {
  await agent.close();
  await stopAllServers();
  await removeTempDirs();
});

async function send(url: string, r: FuzzRequest, extraHeaders: Record<string, string> = {}): Promise<FuzzAnswer> {
  const res = await request(url + r.path, { method: r.method as "GET", headers: { ...r.headers, ...extraHeaders }, body: r.body, dispatcher: agent });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

interface Tally {
  sent: number;
  byStatus: Map<number, number>;
  byCode: Map<string, number>;
  problems: string[];
}

async function campaign(url: string, fuzzer: Fuzzer, count: number, headers: Record<string, string> = {}): Promise<Tally> {
  const tally: Tally = { sent: 0, byStatus: new Map(), byCode: new Map(), problems: [] };
  const concurrency = 8;
  let next = 0;
  const requests = Array.from({ length: count }, () => fuzzer.next());
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const r = requests[next++]!;
        const a = await send(url, r, headers);
        tally.sent++;
        tally.byStatus.set(a.status, (tally.byStatus.get(a.status) ?? 0) + 1);
        const what = `${r.kind} ${r.method} ${r.path.slice(0, 80)} → ${a.status} ${a.body.slice(0, 200)}`;
        if (a.status >= 500) tally.problems.push(`5xx: ${what}`);
        if (a.status >= 400 && r.method !== "HEAD") {
          const code = codeOf(a);
          if (code === undefined) tally.problems.push(`uncoded: ${what}`);
          else tally.byCode.set(code, (tally.byCode.get(code) ?? 0) + 1);
        }
      }
    }),
  );
  return tally;
}

async function sqs(url: string, action: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await request(`${url}/`, { method: "POST", headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}`, ...headers }, body: JSON.stringify(body), dispatcher: agent });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${action}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

describe("seeded fuzz campaign", () => {
  let srv: TestServer;
  let canaryUrl: string;
  let canaryJobId: string;

  beforeAll(async () => {
    srv = await startTestServer({ logger });
    canaryUrl = (await sqs(srv.url, "CreateQueue", { QueueName: "canary-7f3a" })).QueueUrl as string;
    await sqs(srv.url, "SendMessage", { QueueUrl: canaryUrl, MessageBody: canaryBody, MessageAttributes: { kind: { DataType: "String", StringValue: "canary" } } });
    const submitted = await request(`${srv.url}/v1/queues/canary-jobs-7f3a/jobs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input: { canary: canaryBody } }), dispatcher: agent });
    canaryJobId = ((await submitted.body.json()) as { job: { id: string } }).job.id;
  });

  it(`${requestsOpen} malformed requests (seed ${seed}): no 5xx, every error coded, no unexpected error`, async () => {
    const tally = await campaign(srv.url, new Fuzzer(seededRandom(seed), queueNames, new URL(srv.url).host), requestsOpen);
    expect(tally.problems.slice(0, 10)).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(tally.sent).toBe(requestsOpen);
    // The campaign reached past the front door: most answers are refusals from deep inside.
    expect(tally.byCode.size).toBeGreaterThan(15);
  }, 180_000);

  it("leaves the canaries intact and the server answering", async () => {
    expect((await request(`${srv.url}/healthz`, { dispatcher: agent })).statusCode).toBe(200);
    const received = await sqs(srv.url, "ReceiveMessage", { QueueUrl: canaryUrl, MessageAttributeNames: ["All"] });
    const messages = received.Messages as Array<{ Body: string; MessageAttributes: Record<string, { StringValue: string }> }>;
    expect(messages).toHaveLength(1);
    expect(messages[0]!.Body).toBe(canaryBody);
    expect(messages[0]!.MessageAttributes.kind!.StringValue).toBe("canary");
    const job = await request(`${srv.url}/v1/jobs/${canaryJobId}`, { dispatcher: agent });
    expect(((await job.body.json()) as { job: { input: unknown; status: string } }).job).toMatchObject({ input: { canary: canaryBody }, status: "queued" });
  });

  it(`${requestsAuthenticated} more against a server with credentials, with a valid token: still no 5xx and every error coded`, async () => {
    const token = "fuzz-token-0123456789abcdef";
    const authed = await startTestServer({ logger, config: { apiToken: new Secret(token), accessKeyId: "AKIDFUZZ", secretAccessKey: new Secret("fuzz-secret-0123456789abcdef") } });
    const fuzzer = new Fuzzer(seededRandom(seed + 1), queueNames, new URL(authed.url).host);
    const withToken = await campaign(authed.url, fuzzer, requestsAuthenticated / 2, { authorization: `Bearer ${token}` });
    const anonymous = await campaign(authed.url, fuzzer, requestsAuthenticated / 2);
    expect([...withToken.problems, ...anonymous.problems].slice(0, 10)).toEqual([]);
    // Without credentials nothing gets past authentication (health checks aside).
    const anonymousCodes = [...anonymous.byCode.keys()].sort();
    expect(anonymousCodes.every((c) => ["Unauthenticated", "MissingAuthenticationToken;Sender", "MissingAuthenticationToken", "IncompleteSignature", "IncompleteSignature;Sender", "RouteNotFound", "InvalidRequest", "InvalidAction;Sender", "InvalidAction", "MalformedQueryString"].includes(c)), anonymousCodes.join(",")).toBe(true);
    expect(unexpected).toEqual([]);
  }, 180_000);
});
