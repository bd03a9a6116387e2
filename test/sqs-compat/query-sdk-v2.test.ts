/**
 * The same scenarios through aws-sdk v2 2.1490.0, which speaks only the query/XML protocol, plus
 * proof that the wire format really is form-encoded requests and XML responses. v2 verifies
 * MD5OfMessageBody itself; attribute digests are checked against test/support/md5.ts.
 */
import type AWS from "aws-sdk";
import { describe, expect, it } from "vitest";
import { destroyV2, sqsV2 } from "../support/clients.js";
import { md5Of } from "../support/md5.js";
import { v2Driver } from "./drivers.js";
import { accountId, useHarness } from "./harness.js";
import { lifecycleScenarios } from "./scenarios-lifecycle.js";
import { messageScenarios } from "./scenarios-messages.js";
import { queueScenarios } from "./scenarios-queues.js";

const h = useHarness((server) => v2Driver(sqsV2(server.url)));

const xmlns = 'xmlns="http://queue.amazonaws.com/doc/2012-11-05/"';

interface Wire {
  requestBody: string;
  requestHeaders: Record<string, string>;
  status: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
}

/** Runs a v2 request and captures exactly what crossed the wire. */
async function capture<D>(req: AWS.Request<D, AWS.AWSError>): Promise<{ wire: Wire; data?: D; error?: AWS.AWSError }> {
  let requestBody = "";
  let requestHeaders: Record<string, string> = {};
  req.on("sign", (r) => {
    requestBody = String(r.httpRequest.body);
    requestHeaders = { ...r.httpRequest.headers };
  });
  let httpResponse: AWS.HttpResponse | undefined;
  req.on("complete", (response) => {
    httpResponse = response.httpResponse;
  });
  let data: D | undefined;
  let error: AWS.AWSError | undefined;
  try {
    data = await req.promise();
  } catch (e) {
    error = e as AWS.AWSError;
  }
  const res = httpResponse!;
  const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
  return { wire: { requestBody, requestHeaders, status: res.statusCode, responseHeaders: headers, responseBody: String(res.body) }, data, error };
}

describe("SQS compatibility: SDK v2 2.1490.0, query/XML protocol", () => {
  queueScenarios(h);
  messageScenarios(h);
  lifecycleScenarios(h);

  describe("v2 only: the wire format", () => {
    it("sends form-encoded Action=… requests and gets XML responses in the 2012-11-05 namespace", async () => {
      const url = await h.createQueue();
      const sqs = sqsV2(h.server.url);
      const { wire, data, error } = await capture(sqs.sendMessage({ QueueUrl: url, MessageBody: "over the wire" }));
      expect(error).toBeUndefined();
      const form = new URLSearchParams(wire.requestBody);
      expect(form.get("Action")).toBe("SendMessage");
      expect(form.get("Version")).toBe("2012-11-05");
      expect(form.get("MessageBody")).toBe("over the wire");
      expect(wire.requestHeaders["Content-Type"]).toMatch(/^application\/x-www-form-urlencoded/);
      expect(Object.keys(wire.requestHeaders).map((k) => k.toLowerCase())).not.toContain("x-amz-target");

      expect(wire.status).toBe(200);
      expect(wire.responseHeaders["content-type"]).toMatch(/xml/);
      expect(wire.responseBody).toMatch(new RegExp(`<SendMessageResponse ${xmlns}>`));
      expect(wire.responseBody).toContain(`<MD5OfMessageBody>${md5Of("over the wire")}</MD5OfMessageBody>`);
      expect(wire.responseBody).toMatch(/<ResponseMetadata>\s*<RequestId>[^<]+<\/RequestId>\s*<\/ResponseMetadata>/);
      expect(data?.MessageId).toEqual(expect.any(String));
      expect(wire.responseBody).toContain(`<MessageId>${data!.MessageId}</MessageId>`);
    });

    it("errors are XML <ErrorResponse> documents with Type, Code and Message", async () => {
      const sqs = sqsV2(h.server.url);
      const { wire, error } = await capture(sqs.getQueueUrl({ QueueName: h.uniqueName("absent") }));
      expect(error?.code).toBe("AWS.SimpleQueueService.NonExistentQueue");
      expect(wire.status).toBe(400);
      expect(wire.responseHeaders["content-type"]).toMatch(/xml/);
      expect(wire.responseBody).toMatch(new RegExp(`<ErrorResponse ${xmlns}>`));
      const errorElement = /<Error>([\s\S]*)<\/Error>/.exec(wire.responseBody)?.[1] ?? "";
      expect(errorElement).toContain("<Type>Sender</Type>");
      expect(errorElement).toContain("<Code>AWS.SimpleQueueService.NonExistentQueue</Code>");
      expect(errorElement).toMatch(/<Message>[^<]+<\/Message>/);
      expect(wire.responseBody).toMatch(/<RequestId>[^<]+<\/RequestId>/);
    });

    it("on a queue URL, actions that take no queue are InvalidAction; the queue's own actions work there", async () => {
      const url = await h.createQueue();
      // An SDK whose endpoint is the queue URL posts every request to the queue's path.
      const onQueue = sqsV2(url);
      const { wire, error } = await capture(onQueue.listQueues({}));
      expect(error).toMatchObject({ code: "InvalidAction", statusCode: 400, message: "The action ListQueues is not valid for this endpoint." });
      expect(wire.status).toBe(400);
      await expect(onQueue.createQueue({ QueueName: h.uniqueName("nested") }).promise()).rejects.toMatchObject({
        code: "InvalidAction",
        message: "The action CreateQueue is not valid for this endpoint.",
      });
      await expect(onQueue.getQueueUrl({ QueueName: h.uniqueName("any") }).promise()).rejects.toMatchObject({ code: "InvalidAction" });
      const sent = await onQueue.sendMessage({ QueueUrl: url, MessageBody: "on its own path" }).promise();
      expect(sent.MessageId).toEqual(expect.any(String));
      destroyV2(onQueue);
    });

    it("a parameter the action doesn't read is refused with InvalidQueryParameter, and nothing is created", async () => {
      const sqs = sqsV2(h.server.url);
      for (const extra of ["Attribute%5B1%5D.Name=VisibilityTimeout&Attribute%5B1%5D.Value=40", "Bogus.1.Name=x"]) {
        const name = h.uniqueName("unread");
        const req = sqs.createQueue({ QueueName: name });
        // The SDK validates its own input, so the stray parameter is added to the built body.
        req.on("build", (r) => {
          r.httpRequest.body = `${String(r.httpRequest.body)}&${extra}`;
        });
        const { wire, error } = await capture(req);
        const key = decodeURIComponent(extra.slice(0, extra.indexOf("=")));
        expect(error).toMatchObject({ code: "InvalidQueryParameter", statusCode: 400, message: `The parameter ${key} is not valid for the action CreateQueue.` });
        expect(wire.responseBody).toContain("<Code>InvalidQueryParameter</Code>");
        await expect(sqs.getQueueUrl({ QueueName: name }).promise()).rejects.toMatchObject({ code: "AWS.SimpleQueueService.NonExistentQueue" });
      }
    });

    it("receives carry attributes as XML elements the SDK parses back", async () => {
      const name = h.uniqueName("xmlrecv");
      const url = await h.createQueue(undefined, undefined, name);
      expect(url).toBe(`${h.server.url}/${accountId}/${name}`);
      const sqs = sqsV2(h.server.url);
      await sqs.sendMessage({ QueueUrl: url, MessageBody: "<xml & \"quotes\" 'apos'>", MessageAttributes: { k: { DataType: "String", StringValue: "<v&>" } } }).promise();
      const { wire, data } = await capture(sqs.receiveMessage({ QueueUrl: url, MessageAttributeNames: ["All"], AttributeNames: ["All"] }));
      expect(wire.responseBody).toMatch(new RegExp(`<ReceiveMessageResponse ${xmlns}>`));
      expect(wire.responseBody).not.toContain("<xml &");
      const m = data!.Messages![0]!;
      expect(m.Body).toBe("<xml & \"quotes\" 'apos'>");
      expect(m.MessageAttributes?.k).toMatchObject({ DataType: "String", StringValue: "<v&>" });
      expect(m.Attributes?.ApproximateReceiveCount).toBe("1");
    });
  });
});
