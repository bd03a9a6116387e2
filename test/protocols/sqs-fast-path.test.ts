/**
 * The node:http fast path for SQS POSTs to `/`, JSON and query (sqs-fast-path.ts), against the fastify
 * route it stands in front of: over a real socket, the same requests must get the same answers.
 * `app.inject()` never reaches the socket, so it always takes the fastify route.
 */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { settle } from "./sqs-harness.js";

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on its own connection; `chunks` are written one by one (chunked, no length). */
function post(url: string, headers: Record<string, string>, body: string | string[]): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    if (Array.isArray(body)) {
      for (const chunk of body) req.write(chunk);
      req.end();
    } else {
      req.end(body);
    }
  });
}

const target = (action: string): Record<string, string> => ({ "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}` });

describe("SQS JSON fast path", () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await removeTempDirs();
  });

  it("answers as the fastify route does: results, errors, status codes and headers", async () => {
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-fast-") });
    const host = new URL(server.url).host;
    const queueUrl = `http://${host}/000000000000/same`;
    const cases: Array<[string, string]> = [
      ["CreateQueue", JSON.stringify({ QueueName: "same", Attributes: { VisibilityTimeout: "45" } })],
      ["GetQueueUrl", JSON.stringify({ QueueName: "same" })],
      ["GetQueueAttributes", JSON.stringify({ QueueUrl: queueUrl, AttributeNames: ["VisibilityTimeout", "DelaySeconds"] })],
      ["ListQueues", "{}"],
      ["GetQueueUrl", JSON.stringify({ QueueName: "missing" })],
      ["SendMessage", JSON.stringify({ QueueUrl: queueUrl, MessageBody: "" })],
      ["ReceiveMessage", JSON.stringify({ QueueUrl: queueUrl, MaxNumberOfMessages: 11 })],
      ["NoSuchAction", "{}"],
      ["ListQueues", "{not json"],
      ["ListQueues", ""],
    ];
    for (const [action, body] of cases) {
      const viaSocket = await post(`${server.url}/`, { ...target(action), host }, body);
      const viaFastify = await server.app.inject({ method: "POST", url: "/", headers: { ...target(action), host }, payload: body });
      const what = `${action} ${body}`;
      expect(viaSocket.status, what).toBe(viaFastify.statusCode);
      expect(viaSocket.body, what).toBe(viaFastify.body);
      for (const name of ["content-type", "x-amzn-query-error", "content-length"]) {
        expect(viaSocket.headers[name], `${what}: ${name}`).toBe(viaFastify.headers[name] === undefined ? undefined : String(viaFastify.headers[name]));
      }
      expect(viaSocket.headers["x-amzn-requestid"], what).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it("answers query-protocol forms as the fastify route does", async () => {
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-fast-") });
    const host = new URL(server.url).host;
    const queueUrl = encodeURIComponent(`http://${host}/000000000000/same`);
    const form = { "content-type": "application/x-www-form-urlencoded; charset=utf-8", host };
    const cases = [
      `Action=CreateQueue&QueueName=same&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=45`,
      `Action=GetQueueUrl&QueueName=same`,
      `Action=GetQueueAttributes&QueueUrl=${queueUrl}&AttributeName.1=VisibilityTimeout`,
      `Action=ListQueues`,
      `Action=GetQueueUrl&QueueName=missing`,
      `Action=SendMessage&QueueUrl=${queueUrl}&MessageBody=`,
      `Action=ReceiveMessage&QueueUrl=${queueUrl}&MaxNumberOfMessages=11`,
      `Action=NoSuchAction`,
      `QueueName=same`,
      `Action=ListQueues&%zz`,
      ``,
    ];
    const requestIdOf = (body: string): string | undefined => /<RequestId>([^<]*)<\/RequestId>/.exec(body)?.[1];
    for (const body of cases) {
      const viaSocket = await post(`${server.url}/`, form, body);
      const viaFastify = await server.app.inject({ method: "POST", url: "/", headers: form, payload: body });
      expect(viaSocket.status, body).toBe(viaFastify.statusCode);
      // Each answer names its own request id; everything else is the same.
      const id = requestIdOf(viaSocket.body);
      expect(id, body).toBe(viaSocket.headers["x-amzn-requestid"]);
      expect(viaSocket.body.replaceAll(id!, "ID"), body).toBe(viaFastify.body.replaceAll(requestIdOf(viaFastify.body)!, "ID"));
      for (const name of ["content-type", "x-amzn-query-error", "content-length"]) {
        expect(viaSocket.headers[name], `${body}: ${name}`).toBe(viaFastify.headers[name] === undefined ? undefined : String(viaFastify.headers[name]));
      }
      expect(viaSocket.headers["x-amzn-requestid"], body).toMatch(/^[0-9a-f-]{36}$/);
    }
    // Metrics hear of each request once, whichever way it came.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('sluice_requests_total{protocol="sqs_query",action="SendMessage",code="MissingRequiredParameterException"} 2\n');
    expect(metrics).toContain('sluice_requests_total{protocol="sqs_query",action="ListQueues",code="OK"} 2\n');
  });

  it("refuses a query form over the limit with SQS's XML error, and closes the connection", async () => {
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-fast-") });
    const big = `Action=ListQueues&QueueNamePrefix=${"a".repeat(4 * 1024 * 1024)}`;
    const form = { "content-type": "application/x-www-form-urlencoded" };
    for (const res of [await post(`${server.url}/`, form, big), await post(`${server.url}/`, form, [big.slice(0, 2_000_000), big.slice(2_000_000)])]) {
      expect(res.status).toBe(413);
      expect(res.headers["content-type"]).toBe("text/xml");
      expect(res.body).toContain("<Code>RequestEntityTooLarge</Code>");
      expect(res.headers.connection).toBe("close");
    }
  });

  it("refuses a body over the limit, declared or streamed, with SQS's error, and closes the connection", async () => {
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-fast-") });
    const big = "a".repeat(4 * 1024 * 1024 + 1);
    const declared = await post(`${server.url}/`, target("ListQueues"), big);
    const streamed = await post(`${server.url}/`, target("ListQueues"), [big.slice(0, 2_000_000), big.slice(2_000_000)]);
    for (const res of [declared, streamed]) {
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toEqual({ __type: "com.amazonaws.sqs#RequestEntityTooLarge", message: "The request body is too large." });
      expect(res.headers["x-amzn-query-error"]).toBe("RequestEntityTooLarge;Sender");
      expect(res.headers.connection).toBe("close");
    }
  });

  it("ends a long poll at shutdown with an empty answer on a closing connection", async () => {
    const clock = new ManualClock();
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-fast-"), clock });
    const { queue } = await server.queues.createQueue("", { name: "lp" });
    const running = server;
    const poll = post(`${running.url}/`, target("ReceiveMessage"), JSON.stringify({ QueueUrl: `${running.url}/000000000000/${queue.name}`, WaitTimeSeconds: 20 }));
    await settle(() => running.queues.waiters.waiterCount() === 1, "the poll to wait");
    const closed = running.close();
    const res = await poll;
    await closed;
    server = undefined;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({});
    expect(res.headers.connection).toBe("close");
  });
});
