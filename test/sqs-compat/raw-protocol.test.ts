/**
 * Raw HTTP checks of what client libraries hide: headers, namespaces, where the query protocol
 * may arrive (GET or POST, on `/` or on the queue path), and errors for unknown actions.
 */
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { md5Of } from "../support/md5.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";

const xmlns = "http://queue.amazonaws.com/doc/2012-11-05/";
let server: TestServer;
let counter = 0;
const uniqueName = (stem: string): string => `raw-${stem}-${++counter}`;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

async function json(action: string, body: unknown, init: { rawBody?: string } = {}): Promise<RawResponse & { json: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/`, {
    method: "POST",
    headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}` },
    body: init.rawBody ?? JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // leave empty; the assertion on the text will show what came back
  }
  return { status: res.status, headers: res.headers, text, json: parsed };
}

async function queryPost(path: string, params: Record<string, string>): Promise<RawResponse> {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ Version: "2012-11-05", ...params }).toString(),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function queryGet(path: string, params: Record<string, string>): Promise<RawResponse> {
  const res = await fetch(`${server.url}${path}?${new URLSearchParams({ Version: "2012-11-05", ...params }).toString()}`);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function xmlText(xml: string, element: string): string | undefined {
  const m = new RegExp(`<${element}>([^<]*)</${element}>`).exec(xml);
  return m ? unescapeXml(m[1]!) : undefined;
}

function unescapeXml(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|lt|gt|amp|quot|apos);/g, (_, e: string) => {
    if (e.startsWith("#x")) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return ({ lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" } as Record<string, string>)[e]!;
  });
}

describe("raw SQS JSON 1.0 protocol", () => {
  it("a success is application/x-amz-json-1.0", async () => {
    const name = uniqueName("json");
    const res = await json("CreateQueue", { QueueName: name });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/x-amz-json-1\.0/);
    expect(res.json).toEqual({ QueueUrl: `${server.url}/000000000000/${name}` });
  });

  it("an error carries x-amzn-query-error <code>;Sender and __type com.amazonaws.sqs#<Shape>", async () => {
    const res = await json("GetQueueUrl", { QueueName: uniqueName("missing") });
    expect(res.status).toBe(400);
    expect(res.headers.get("x-amzn-query-error")).toBe("AWS.SimpleQueueService.NonExistentQueue;Sender");
    expect(res.headers.get("content-type")).toMatch(/^application\/x-amz-json-1\.0/);
    expect(res.json.__type).toBe("com.amazonaws.sqs#QueueDoesNotExist");
    expect(res.json.message).toEqual(expect.stringMatching(/\S/));
  });

  it.each([
    ["QueueNameExists", "QueueAlreadyExists", 400],
    ["ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 404],
    ["InvalidAttributeValue", "InvalidAttributeValue", 400],
  ] as const)("maps %s to query code %s and HTTP %d", async (shape, code, status) => {
    const name = uniqueName("maps");
    const created = await json("CreateQueue", { QueueName: name, Attributes: { VisibilityTimeout: "10" } });
    const queueUrl = created.json.QueueUrl as string;
    const res =
      shape === "QueueNameExists"
        ? await json("CreateQueue", { QueueName: name, Attributes: { VisibilityTimeout: "11" } })
        : shape === "ReceiptHandleIsInvalid"
          ? await json("DeleteMessage", { QueueUrl: queueUrl, ReceiptHandle: "nope" })
          : await json("SetQueueAttributes", { QueueUrl: queueUrl, Attributes: { VisibilityTimeout: "50000" } });
    expect(res.status).toBe(status);
    expect(res.headers.get("x-amzn-query-error")).toBe(`${code};Sender`);
    expect(res.json.__type).toBe(`com.amazonaws.sqs#${shape}`);
  });

  // The model doesn't define these two; SQS's own JSON answers name them so (botocore reports the
  // __type as QueryErrorCode), while the header keeps the query code that SDKs show.
  it.each([
    ["InvalidParameterValue", "InvalidParameterValueException", { MaxNumberOfMessages: 11 }],
    ["MissingParameter", "MissingRequiredParameterException", { QueueUrl: undefined }],
  ] as const)("%s has __type com.amazonaws.sqs#%s, as SQS sends it", async (code, type, input) => {
    const created = await json("CreateQueue", { QueueName: uniqueName("unmodeled") });
    const res = await json("ReceiveMessage", { QueueUrl: created.json.QueueUrl, ...input });
    expect(res.status).toBe(400);
    expect(res.headers.get("x-amzn-query-error")).toBe(`${code};Sender`);
    expect(res.json.__type).toBe(`com.amazonaws.sqs#${type}`);
  });

  it("an unknown action is a 400 error with x-amzn-query-error", async () => {
    const res = await json("Frobnicate", {});
    expect(res.status).toBe(400);
    expect(res.headers.get("x-amzn-query-error")).toMatch(/^[A-Za-z.]+;Sender$/);
    expect(String(res.json.__type)).toMatch(/InvalidAction|UnknownOperation/);
  });

  it("a malformed JSON body is a 400 error with x-amzn-query-error, not a crash", async () => {
    const res = await json("SendMessage", undefined, { rawBody: "{not json" });
    expect(res.status).toBe(400);
    expect(res.headers.get("x-amzn-query-error")).toMatch(/;Sender$/);
    expect(res.json.__type).toEqual(expect.any(String));
  });

  it("the queue URL's host is the request's Host header", async () => {
    const name = uniqueName("host");
    const res = await request(`${server.url}/`, {
      method: "POST",
      headers: { host: "sqs.example.test:4321", "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.CreateQueue" },
      body: JSON.stringify({ QueueName: name }),
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ QueueUrl: `http://sqs.example.test:4321/000000000000/${name}` });
  });
});

describe("raw SQS query/XML protocol", () => {
  it("GET with a query string on / works (ListQueues), XML in the 2012-11-05 namespace", async () => {
    const name = uniqueName("get");
    await json("CreateQueue", { QueueName: name });
    const res = await queryGet("/", { Action: "ListQueues", QueueNamePrefix: name });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/xml/);
    expect(res.text).toContain(`<ListQueuesResponse xmlns="${xmlns}">`);
    expect(res.text).toContain(`<QueueUrl>${server.url}/000000000000/${name}</QueueUrl>`);
  });

  it("POST on the queue URL path needs no QueueUrl parameter; GET on it too", async () => {
    const name = uniqueName("path");
    await json("CreateQueue", { QueueName: name });
    const path = `/000000000000/${name}`;
    const sent = await queryPost(path, { Action: "SendMessage", MessageBody: "via path" });
    expect(sent.status).toBe(200);
    expect(sent.text).toContain(`<SendMessageResponse xmlns="${xmlns}">`);
    expect(xmlText(sent.text, "MD5OfMessageBody")).toBe(md5Of("via path"));
    const messageId = xmlText(sent.text, "MessageId");
    expect(messageId).toMatch(/^[0-9a-f-]{36}$/);

    const got = await queryGet(path, { Action: "ReceiveMessage", VisibilityTimeout: "0" });
    expect(got.status).toBe(200);
    expect(got.text).toContain(`<ReceiveMessageResponse xmlns="${xmlns}">`);
    expect(xmlText(got.text, "MessageId")).toBe(messageId);
    expect(xmlText(got.text, "Body")).toBe("via path");

    const attrs = await queryPost(path, { Action: "GetQueueAttributes", "AttributeName.1": "ApproximateNumberOfMessages" });
    expect(attrs.status).toBe(200);
    expect(attrs.text).toMatch(/<Attribute>\s*<Name>ApproximateNumberOfMessages<\/Name>\s*<Value>1<\/Value>\s*<\/Attribute>/);
  });

  it("escapes XML special characters and carriage returns in bodies", async () => {
    const name = uniqueName("escape");
    await json("CreateQueue", { QueueName: name });
    const body = `a<b>&"c"'d'\r\ne]]>f`;
    const path = `/000000000000/${name}`;
    const sent = await queryPost(path, { Action: "SendMessage", MessageBody: body });
    expect(xmlText(sent.text, "MD5OfMessageBody")).toBe(md5Of(body));
    const got = await queryGet(path, { Action: "ReceiveMessage" });
    const rawBody = /<Body>([^<]*)<\/Body>/.exec(got.text)?.[1];
    expect(rawBody, got.text).toBeDefined();
    // A literal CR would be normalised to LF by any XML parser; it has to travel as a reference.
    expect(rawBody).not.toContain("\r");
    expect(unescapeXml(rawBody!)).toBe(body);
    expect(xmlText(got.text, "MD5OfBody")).toBe(md5Of(body));
  });

  it("errors are <ErrorResponse> with Type, Code, Message and RequestId", async () => {
    const res = await queryGet("/", { Action: "GetQueueUrl", QueueName: uniqueName("nope") });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/xml/);
    expect(res.text).toContain(`<ErrorResponse xmlns="${xmlns}">`);
    expect(xmlText(res.text, "Type")).toBe("Sender");
    expect(xmlText(res.text, "Code")).toBe("AWS.SimpleQueueService.NonExistentQueue");
    expect(xmlText(res.text, "Message")).toMatch(/\S/);
    expect(xmlText(res.text, "RequestId")).toMatch(/\S/);
  });

  it("an unknown action is an InvalidAction error", async () => {
    const res = await queryPost("/", { Action: "Frobnicate" });
    expect(res.status).toBe(400);
    expect(res.text).toContain(`<ErrorResponse xmlns="${xmlns}">`);
    expect(xmlText(res.text, "Code")).toBe("InvalidAction");
  });

  it("a request with no Action at all is an error, not a crash", async () => {
    const res = await fetch(`${server.url}/`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "Version=2012-11-05" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("<ErrorResponse");
  });
});
