/** The core-error → SQS-error table, and how errors look on the wire in each protocol. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorCode, SluiceError, errorCatalog } from "../../src/core/errors.js";
import { protocolErrors, sqsErrorForCode, toSqsWireError } from "../../src/protocols/sqs/sqs-errors.js";
import { type SqsHarness, host, openHarness, xmlText } from "./sqs-harness.js";

/** Error shapes of the smithy model with their awsQueryError code and HTTP status. */
const modelErrors: Record<string, { code: string; status: number }> = {
  BatchEntryIdsNotDistinct: { code: "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", status: 400 },
  BatchRequestTooLong: { code: "AWS.SimpleQueueService.BatchRequestTooLong", status: 400 },
  EmptyBatchRequest: { code: "AWS.SimpleQueueService.EmptyBatchRequest", status: 400 },
  InvalidAttributeName: { code: "InvalidAttributeName", status: 400 },
  InvalidAttributeValue: { code: "InvalidAttributeValue", status: 400 },
  InvalidBatchEntryId: { code: "AWS.SimpleQueueService.InvalidBatchEntryId", status: 400 },
  InvalidMessageContents: { code: "InvalidMessageContents", status: 400 },
  MessageNotInflight: { code: "AWS.SimpleQueueService.MessageNotInflight", status: 400 },
  OverLimit: { code: "OverLimit", status: 403 },
  PurgeQueueInProgress: { code: "AWS.SimpleQueueService.PurgeQueueInProgress", status: 403 },
  QueueDeletedRecently: { code: "AWS.SimpleQueueService.QueueDeletedRecently", status: 400 },
  QueueDoesNotExist: { code: "AWS.SimpleQueueService.NonExistentQueue", status: 400 },
  QueueNameExists: { code: "QueueAlreadyExists", status: 400 },
  ReceiptHandleIsInvalid: { code: "ReceiptHandleIsInvalid", status: 404 },
  ResourceNotFoundException: { code: "ResourceNotFoundException", status: 404 },
  TooManyEntriesInBatchRequest: { code: "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", status: 400 },
  UnsupportedOperation: { code: "AWS.SimpleQueueService.UnsupportedOperation", status: 400 },
};

describe("the SQS error table", () => {
  it("maps every core error code", () => {
    for (const code of Object.keys(errorCatalog) as ErrorCode[]) {
      const spec = sqsErrorForCode[code];
      expect(spec, code).toBeDefined();
      expect(spec.shape, code).toMatch(/^[A-Za-z]+$/);
      expect(spec.queryCode.length, code).toBeGreaterThan(0);
      expect([400, 403, 404, 413, 500, 503], code).toContain(spec.httpStatus);
      // The server's fault, not the request's: the 5xx.
      expect(spec.fault, code).toBe(code === "InternalError" || code === "ServiceUnavailable" || code === "StorageFull" ? "Receiver" : "Sender");
    }
  });

  const unmodeledQueryCodes: Record<string, string> = {
    InvalidParameterValueException: "InvalidParameterValue",
    MissingRequiredParameterException: "MissingParameter",
  };

  it("uses the model's query code and status for every shape the model defines", () => {
    for (const spec of [...Object.values(sqsErrorForCode), ...Object.values(protocolErrors)]) {
      const model = modelErrors[spec.shape];
      if (model) expect({ shape: spec.shape, code: spec.queryCode, status: spec.httpStatus }).toEqual({ shape: spec.shape, code: model.code, status: model.status });
      // Unmodeled: the code is the name, except the two whose JSON name SQS suffixes (sqs-errors.ts).
      else expect(spec.queryCode, `${spec.shape} is not in the model`).toBe(unmodeledQueryCodes[spec.shape] ?? spec.shape);
    }
  });

  it("maps the codes whose SQS names differ from core's", () => {
    expect(sqsErrorForCode.QueueNotFound).toMatchObject({ shape: "QueueDoesNotExist", queryCode: "AWS.SimpleQueueService.NonExistentQueue" });
    expect(sqsErrorForCode.QueueAlreadyExists).toMatchObject({ shape: "QueueNameExists", queryCode: "QueueAlreadyExists" });
    expect(sqsErrorForCode.MessageTooLong).toMatchObject({ shape: "InvalidParameterValueException", queryCode: "InvalidParameterValue" });
    expect(sqsErrorForCode.ReceiptHandleInvalid).toMatchObject({ shape: "ReceiptHandleIsInvalid", httpStatus: 404 });
  });

  it("turns an unexpected error into InternalError and reports it", () => {
    const seen: unknown[] = [];
    const boom = new TypeError("boom");
    expect(toSqsWireError(boom, (e) => seen.push(e))).toMatchObject({ shape: "InternalError", httpStatus: 500, fault: "Receiver" });
    expect(seen).toEqual([boom]);
    expect(toSqsWireError(new SluiceError("QueueNotFound"), (e) => seen.push(e)).shape).toBe("QueueDoesNotExist");
    expect(seen).toHaveLength(1);
  });
});

describe("errors on the wire", () => {
  let h: SqsHarness;
  beforeAll(async () => {
    h = await openHarness();
  });
  afterAll(async () => {
    expect(h.unexpected).toEqual([]);
    await h.close();
  });

  it("JSON: __type, message and the x-amzn-query-error header", async () => {
    const res = await h.json("GetQueueUrl", { QueueName: "missing" });
    expect(res.statusCode).toBe(400);
    expect(res.headers["content-type"]).toMatch(/^application\/x-amz-json-1\.0/);
    expect(res.headers["x-amzn-query-error"]).toBe("AWS.SimpleQueueService.NonExistentQueue;Sender");
    expect(res.headers["x-amzn-requestid"]).toBeTruthy();
    expect(res.json()).toEqual({ __type: "com.amazonaws.sqs#QueueDoesNotExist", message: "The specified queue does not exist." });
  });

  it("query: ErrorResponse with Type, Code, Message, Detail and RequestId", async () => {
    const res = await h.query({ Action: "GetQueueUrl", QueueName: "missing" });
    expect(res.statusCode).toBe(400);
    expect(res.headers["content-type"]).toMatch(/^text\/xml/);
    expect(res.body).toContain('<ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">');
    expect(xmlText(res.body, "Type")).toBe("Sender");
    expect(xmlText(res.body, "Code")).toBe("AWS.SimpleQueueService.NonExistentQueue");
    // SQS words a missing queue its own way in query answers (JSON: "The specified queue does not exist.").
    expect(xmlText(res.body, "Message")).toBe("The specified queue does not exist for this wsdl version.");
    expect(res.body).toContain("<Detail/>");
    expect(xmlText(res.body, "RequestId")).toBe(res.headers["x-amzn-requestid"]);
  });

  it("an unknown action is InvalidAction in both protocols", async () => {
    const json = await h.json("FlyToTheMoon", {});
    expect(json.statusCode).toBe(400);
    expect(json.headers["x-amzn-query-error"]).toBe("InvalidAction;Sender");
    const query = await h.query({ Action: "FlyToTheMoon" });
    expect(query.statusCode).toBe(400);
    expect(xmlText(query.body, "Code")).toBe("InvalidAction");
  });

  it("a request without an action is MissingAction", async () => {
    const res = await h.app.inject({ method: "POST", url: "/", headers: { host, "content-type": "application/x-www-form-urlencoded" }, payload: "Version=2012-11-05" });
    expect(res.statusCode).toBe(400);
    expect(xmlText(res.body, "Code")).toBe("MissingAction");
  });

  it("a junk JSON body is SerializationException", async () => {
    const res = await h.json("ListQueues", "{not json");
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ __type: "com.amazonaws.sqs#SerializationException" });
    expect(res.headers["x-amzn-query-error"]).toBe("SerializationException;Sender");
  });

  it("a malformed query string is MalformedQueryString", async () => {
    const res = await h.app.inject({ method: "GET", url: "/?Action=ListQueues&QueueNamePrefix=%ZZ", headers: { host } });
    expect(res.statusCode).toBe(400);
    expect(xmlText(res.body, "Code")).toBe("MalformedQueryString");
  });

  it("a missing required parameter is MissingParameter", async () => {
    const res = await h.json("GetQueueUrl", {});
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ __type: "com.amazonaws.sqs#MissingRequiredParameterException", message: "The request must contain the parameter QueueName." });
  });

  it("a body beyond the HTTP limit gets a protocol error, not a dropped connection", async () => {
    const res = await h.json("SendMessage", { QueueUrl: "q", MessageBody: "x".repeat(5 * 1024 * 1024) });
    expect(res.statusCode).toBe(413);
    expect(res.headers["x-amzn-query-error"]).toBe("RequestEntityTooLarge;Sender");
  });

  it("routes all 23 actions of the API (none is InvalidAction)", async () => {
    const actions = [
      "AddPermission", "CancelMessageMoveTask", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch", "CreateQueue", "DeleteMessage",
      "DeleteMessageBatch", "DeleteQueue", "GetQueueAttributes", "GetQueueUrl", "ListDeadLetterSourceQueues", "ListMessageMoveTasks",
      "ListQueueTags", "ListQueues", "PurgeQueue", "ReceiveMessage", "RemovePermission", "SendMessage", "SendMessageBatch",
      "SetQueueAttributes", "StartMessageMoveTask", "TagQueue", "UntagQueue",
    ];
    for (const action of actions) {
      const json = await h.json(action, {});
      expect(json.headers["x-amzn-query-error"] ?? "", action).not.toMatch(/^InvalidAction/);
      const query = await h.query({ Action: action });
      expect(xmlText(query.body, "Code") ?? "", action).not.toBe("InvalidAction");
    }
  });
});
