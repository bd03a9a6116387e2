/**
 * Hostile input that an external fuzz campaign found served, crashing or silently altered: each
 * now gets a specific, coded refusal and changes nothing.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SqsHarness, openHarness, xmlText } from "../protocols/sqs-harness.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";

let h: SqsHarness;
let srv: TestServer;

beforeAll(async () => {
  h = await openHarness();
  srv = await startTestServer();
});
afterAll(async () => {
  await h.close();
  await stopAllServers();
  await removeTempDirs();
});

/** Sends raw bytes and returns everything the server wrote before closing (or `waitMs` passed). */
function rawExchange(port: number, bytes: string | Buffer, waitMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let out = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(out);
    }, waitMs);
    socket.on("data", (d) => (out += d.toString("latin1")));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.on("error", reject);
    socket.write(bytes);
  });
}

function jobsPost(path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${srv.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
}

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const json = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, ...json.error };
}

describe("JSON nesting", () => {
  const deep = (levels: number): string => `${"[".repeat(levels)}${"]".repeat(levels)}`;

  it("a job input nested 5,000 levels: 400 ValidationFailed before any recursion, not 500", async () => {
    const res = await jobsPost("/v1/queues/deep/jobs", `{"input":${deep(5_000)}}`);
    expect(await errorOf(res)).toMatchObject({ status: 400, code: "ValidationFailed" });
    const ok = await jobsPost("/v1/queues/deep/jobs", `{"input":${deep(60)}}`);
    expect(ok.status).toBe(201);
  });

  it("a job body at the depth limit is taken, one level deeper is not; depth is named before poisoning", async () => {
    const tooDeep = { status: 400, code: "ValidationFailed", message: "The request body nests JSON deeper than 64 levels." };
    expect((await jobsPost("/v1/queues/deep/jobs", `{"input":${deep(63)}}`)).status).toBe(201);
    expect(await errorOf(await jobsPost("/v1/queues/deep/jobs", `{"input":${deep(64)}}`))).toEqual(tooDeep);
    expect(await errorOf(await jobsPost("/v1/queues/deep/jobs", `{"__proto__":{},"input":${deep(5_000)}}`))).toEqual(tooDeep);
    expect(await errorOf(await jobsPost("/v1/queues/deep/jobs", `{"input":${deep(5_000)}`))).toEqual(tooDeep);
  });

  it("an SQS JSON body nested 5,000 levels: SerializationException; a nested queue Policy: InvalidAttributeValue", async () => {
    const res = await h.json("ListQueues", `{"QueueNamePrefix":${deep(5_000)}}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().__type).toBe("com.amazonaws.sqs#SerializationException");
    const url = await h.createQueue("policy-deep");
    const policy = await h.json("SetQueueAttributes", { QueueUrl: url, Attributes: { Policy: `{"a":${deep(5_000)}}` } });
    expect(policy.statusCode).toBe(400);
    expect(h.unexpected).toEqual([]);
  });
});

describe("invalid UTF-8", () => {
  it("in an SQS JSON message body: InvalidMessageContents, nothing stored", async () => {
    const url = await h.createQueue("utf8");
    const body = Buffer.concat([Buffer.from(`{"QueueUrl":"${url}","MessageBody":"a`), Buffer.from([0xff, 0xfe]), Buffer.from(`b"}`)]);
    const res = await h.app.inject({ method: "POST", url: "/", headers: { host: "sqs.test:9324", "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.SendMessage" }, payload: body });
    expect(res.statusCode).toBe(400);
    expect(res.headers["x-amzn-query-error"]).toBe("InvalidMessageContents;Sender");
    const got = await h.json("ReceiveMessage", { QueueUrl: url });
    expect(got.json().Messages ?? []).toEqual([]);
  });

  it("in a query-protocol body: MalformedQueryString", async () => {
    const res = await h.query({ Action: "SendMessage", QueueUrl: "http://sqs.test:9324/000000000000/utf8", MessageBody: "x" }, {});
    expect(res.statusCode).toBe(200);
    const bad = await h.app.inject({ method: "POST", url: "/", headers: { host: "sqs.test:9324", "content-type": "application/x-www-form-urlencoded" }, payload: "Action=SendMessage&QueueUrl=http%3A%2F%2Fsqs.test%3A9324%2F000000000000%2Futf8&MessageBody=%FF%FE" });
    expect(bad.statusCode).toBe(400);
    expect(xmlText(bad.body, "Code")).toBe("MalformedQueryString");
  });

  it("in a job input: 400 ValidationFailed, no job", async () => {
    const body = Buffer.concat([Buffer.from('{"input":"a'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expect(await errorOf(await jobsPost("/v1/queues/utf8/jobs", body))).toMatchObject({ status: 400, code: "ValidationFailed" });
  });
});

describe("fields and names that slipped through", () => {
  it("a submit with an unknown field named constructor (or toString): 400 like any unknown field", async () => {
    for (const field of ["constructor", "toString", "hasOwnProperty"]) {
      const res = await jobsPost("/v1/queues/fields/jobs", `{"input":1,"${field}":{}}`);
      expect(await errorOf(res), field).toMatchObject({ status: 400, code: "ValidationFailed" });
    }
  });

  it("a __proto__ attribute or tag name is refused, not silently dropped", async () => {
    const url = await h.createQueue("proto");
    const attr = await h.json("SendMessage", `{"QueueUrl":"${url}","MessageBody":"x","MessageAttributes":{"__proto__":{"DataType":"String","StringValue":"v"}}}`);
    expect(attr.statusCode).toBe(400);
    const tag = await h.json("TagQueue", `{"QueueUrl":"${url}","Tags":{"__proto__":"v"}}`);
    expect(tag.statusCode).toBe(400);
    const query = await h.query({ Action: "TagQueue", QueueUrl: url, "Tag.1.Key": "__proto__", "Tag.1.Value": "v" });
    expect(query.statusCode).toBe(400);
    expect(h.unexpected).toEqual([]);
  });

  it("SetQueueAttributes without Attributes, TagQueue without Tags, UntagQueue without TagKeys: MissingParameter; Tag[1].Key spellings: InvalidQueryParameter", async () => {
    const url = await h.createQueue("missing");
    for (const [action, body] of [
      ["SetQueueAttributes", { QueueUrl: url }],
      ["TagQueue", { QueueUrl: url }],
      ["UntagQueue", { QueueUrl: url }],
    ] as const) {
      const res = await h.json(action, body);
      expect(res.statusCode, action).toBe(400);
      expect(res.headers["x-amzn-query-error"], action).toBe("MissingParameter;Sender");
    }
    const bracketed = await h.query({ Action: "TagQueue", QueueUrl: url, "Tag[1].Key": "k", "Tag[1].Value": "v" });
    expect(xmlText(bracketed.body, "Code")).toBe("InvalidQueryParameter");
    expect(xmlText(bracketed.body, "Message")).toMatch(/^The parameter Tag\[1\]\.(Key|Value) is not valid for the action TagQueue\.$/);
  });

  it("tag keys and values with characters SQS does not allow are refused", async () => {
    const url = await h.createQueue("tagchars");
    for (const bad of ["a\u0000b", "tab\there", "\ud800", "x\uffff", "x\ufffe"]) {
      const res = await h.json("TagQueue", { QueueUrl: url, Tags: { [bad]: "v" } });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      const value = await h.json("TagQueue", { QueueUrl: url, Tags: { k: bad } });
      expect(value.statusCode, JSON.stringify(bad)).toBe(400);
    }
    const listed = await h.json("ListQueueTags", { QueueUrl: url });
    expect(listed.json().Tags ?? {}).toEqual({});
  });

  it("UntagQueue refuses the tag keys TagQueue refuses, with the same answer", async () => {
    const url = await h.createQueue("untagchars");
    expect((await h.json("TagQueue", { QueueUrl: url, Tags: { keep: "v" } })).statusCode).toBe(200);
    for (const bad of ["a\u0000b", "tab\there", "\ud800", "x\uffff", "x\ufffe", "__proto__", "k".repeat(129), ""]) {
      const tag = await h.json("TagQueue", { QueueUrl: url, Tags: { [bad]: "v" } });
      const untag = await h.json("UntagQueue", { QueueUrl: url, TagKeys: ["keep", bad] });
      expect(untag.statusCode, JSON.stringify(bad)).toBe(400);
      expect(untag.headers["x-amzn-query-error"], JSON.stringify(bad)).toBe("InvalidParameterValue;Sender");
      expect(untag.json().message, JSON.stringify(bad)).toBe(tag.json().message);
    }
    // Nothing was untagged: the valid key beside each bad one stayed.
    expect((await h.json("ListQueueTags", { QueueUrl: url })).json().Tags).toEqual({ keep: "v" });
  });
});

describe("jobs API headers and query strings", () => {
  it("two Idempotency-Key headers in one request: 400", async () => {
    const res = await new Promise<string>((resolve, reject) => {
      const body = '{"input":1}';
      rawExchange(srv.port, `POST /v1/queues/keys/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`).then(resolve, reject);
    });
    expect(res).toMatch(/^HTTP\/1\.1 400/);
    expect(res).toContain('"code":"ValidationFailed"');
  });

  it("a batch entry's idempotencyKey of \"\" or \"   \": the whole batch is refused", async () => {
    for (const key of ["", "   "]) {
      const res = await jobsPost("/v1/queues/keys/jobs/batch", JSON.stringify({ jobs: [{ input: 1, idempotencyKey: key }] }));
      expect(await errorOf(res), JSON.stringify(key)).toMatchObject({ status: 400, code: "ValidationFailed" });
    }
  });

  it("?wait=0x10 and ?wait=1e1 are not numbers", async () => {
    for (const wait of ["0x10", "1e1", "+5", " 5", "5.0"]) {
      const res = await fetch(`${srv.url}/v1/jobs/00000000-0000-7000-8000-000000000000?wait=${encodeURIComponent(wait)}`);
      expect(await errorOf(res), wait).toMatchObject({ status: 400, code: "ValidationFailed" });
    }
  });
});

describe("requests node:http or the router would have served or dropped", () => {
  it("POST //queue (an empty account segment) is not a queue URL", async () => {
    await h.createQueue("slashes");
    const res = await h.app.inject({ method: "POST", url: "//slashes", headers: { host: "sqs.test:9324", "content-type": "application/x-www-form-urlencoded" }, payload: "Action=SendMessage&MessageBody=x&Version=2012-11-05" });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(xmlText(res.body, "Code")).toBeTruthy();
  });

  it("an HTTP/0.9-style request line with headers: 505, coded, not served", async () => {
    const res = await rawExchange(srv.port, "GET /healthz\r\nHost: x\r\n\r\n");
    expect(res).not.toContain('"status":"ok"');
    expect(res).toMatch(/^HTTP\/1\.1 (400|505)/);
    expect(res).toContain('"code":"InvalidRequest"');
  });

  it("an HTTP/1.1 request without Host: a coded 400 in the protocol it speaks, not an empty one", async () => {
    const plain = await rawExchange(srv.port, "GET /healthz HTTP/1.1\r\n\r\n");
    expect(plain).toMatch(/^HTTP\/1\.1 400/);
    expect(plain).toContain('{"error":{"code":"InvalidRequest","message":"An HTTP/1.1 request must carry a Host header."}}');
    const body = "Action=ListQueues&Version=2012-11-05";
    const sqs = await rawExchange(srv.port, `POST / HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expect(sqs).toMatch(/^HTTP\/1\.1 400/);
    expect(sqs).toContain("<Code>InvalidRequest</Code><Message>An HTTP/1.1 request must carry a Host header.</Message>");
    // HTTP/1.0 never needed one.
    expect(await rawExchange(srv.port, "GET /healthz HTTP/1.0\r\n\r\n")).toMatch(/^HTTP\/1\.1 200[\s\S]*"status":"ok"/);
  });

  it("an unknown path under /v1 is the jobs API's JSON 404, not an SQS error for a queue URL", async () => {
    for (const path of ["/v1/nope", "/v1/nope/", "/v1/"]) {
      const res = await fetch(`${srv.url}${path}`);
      expect(await errorOf(res), path).toMatchObject({ status: 404, code: "RouteNotFound", message: `No route answers GET ${path}.` });
    }
    expect((await fetch(`${srv.url}/v1/jobs/nope`)).status).toBe(404);
    // A real queue URL still answers SQS.
    const sqs = await fetch(`${srv.url}/000000000000/nope?Action=GetQueueAttributes&Version=2012-11-05`);
    expect(await sqs.text()).toContain("<Code>AWS.SimpleQueueService.NonExistentQueue</Code>");
  });

  it("CONNECT: 405 with a coded body instead of a silent close", async () => {
    const res = await rawExchange(srv.port, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    expect(res).toMatch(/^HTTP\/1\.1 405/);
    expect(res).toContain('"code":"InvalidRequest"');
  });

  it("unparseable requests, bad percent-escapes and unknown routes: coded bodies, never fastify's generic ones", async () => {
    const garbage = await rawExchange(srv.port, "\x00\x01\x02 nonsense\r\n\r\n");
    expect(garbage).toMatch(/^HTTP\/1\.1 400/);
    expect(garbage).toContain('"code":"InvalidRequest"');
    const badUrl = await fetch(`${srv.url}/v1/jobs/%E0%A4%A`);
    expect(await errorOf(badUrl)).toMatchObject({ status: 400, code: "InvalidRequest" });
    const unknown = await fetch(`${srv.url}/v2/nothing/here/at/all`);
    expect(await errorOf(unknown)).toMatchObject({ status: 404, code: "RouteNotFound" });
    const sqsUnknown = await fetch(`${srv.url}/a/b/c`, { method: "POST", headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.ListQueues" }, body: "{}" });
    expect(sqsUnknown.status).toBe(404);
    expect(sqsUnknown.headers.get("x-amzn-query-error")).toBe("InvalidAction;Sender");
    const expectation = await rawExchange(srv.port, "POST /v1/queues/q/jobs HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
    expect(expectation).toMatch(/^HTTP\/1\.1 417/);
    expect(expectation).toContain('"code":"InvalidRequest"');
  });
});
