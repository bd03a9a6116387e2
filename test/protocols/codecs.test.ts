/** The protocol layer's pure parts: detection, form decoding into shapes, JSON bodies, XML escaping. */
import { describe, expect, it } from "vitest";
import type { SluiceError } from "../../src/core/errors.js";
import { detectProtocol, jsonAction, queryParams } from "../../src/protocols/sqs/detect-protocol.js";
import { decodeJsonInput } from "../../src/protocols/sqs/json-codec.js";
import { decodeQueryInput } from "../../src/protocols/sqs/query-codec.js";
import { queryInputShapes } from "../../src/protocols/sqs/query-shapes.js";
import { queueNameFromUrl } from "../../src/protocols/sqs/queue-url.js";
import { SqsProtocolError } from "../../src/protocols/sqs/sqs-errors.js";
import { escapeXml, xmlErrorResponse, xmlResponse } from "../../src/protocols/sqs/xml.js";
import { sqsActions } from "../../src/protocols/sqs/actions/index.js";

function decodeForm(form: string): { action: string; input: ReturnType<typeof decodeQueryInput> } {
  const { action, params } = queryParams({ rawQuery: "", body: form, contentType: "application/x-www-form-urlencoded" });
  return { action, input: decodeQueryInput(action, params) };
}

describe("protocol detection", () => {
  it("is JSON when X-Amz-Target is present or the content type is x-amz-json", () => {
    expect(detectProtocol({ target: "AmazonSQS.SendMessage", contentType: "application/x-amz-json-1.0" })).toBe("json");
    expect(detectProtocol({ target: "AmazonSQS.SendMessage", contentType: undefined })).toBe("json");
    expect(detectProtocol({ target: undefined, contentType: "application/x-amz-json-1.0" })).toBe("json");
  });

  it("is query otherwise", () => {
    expect(detectProtocol({ target: undefined, contentType: "application/x-www-form-urlencoded; charset=utf-8" })).toBe("query");
    expect(detectProtocol({ target: undefined, contentType: undefined })).toBe("query");
  });

  it("takes the JSON action from the target", () => {
    expect(jsonAction("AmazonSQS.ReceiveMessage")).toBe("ReceiveMessage");
    expect(() => jsonAction("DynamoDB_20120810.GetItem")).toThrow(SqsProtocolError);
    expect(() => jsonAction(undefined)).toThrow(/X-Amz-Target/);
  });

  it("reads query parameters from the query string and a form body together", () => {
    const { action, params } = queryParams({ rawQuery: "Action=SendMessage", body: "MessageBody=hi%20there&QueueUrl=q", contentType: "application/x-www-form-urlencoded" });
    expect(action).toBe("SendMessage");
    expect(decodeQueryInput(action, params)).toEqual({ MessageBody: "hi there", QueueUrl: "q" });
  });

  it("ignores a body that is not form-encoded", () => {
    const { params } = queryParams({ rawQuery: "Action=ListQueues", body: "QueueNamePrefix=x", contentType: "text/plain" });
    expect(decodeQueryInput("ListQueues", params)).toEqual({});
  });

  it("fails without an Action, and on broken percent-encoding", () => {
    expect(() => queryParams({ rawQuery: "", body: "Version=2012-11-05", contentType: undefined })).toThrow(/Action/);
    expect(() => queryParams({ rawQuery: "Action=ListQueues&QueueNamePrefix=%E0%A4%A", body: "", contentType: undefined })).toThrow(SqsProtocolError);
  });
});

describe("query decoding follows the model's xmlName/xmlFlattened traits", () => {
  it("has a shape for every routed action", () => {
    expect(Object.keys(queryInputShapes).sort()).toEqual([...sqsActions.keys()].sort());
  });

  it("decodes queue attributes and tags (Attribute.N.Name/Value, Tag.N.Key/Value)", () => {
    const { input } = decodeForm(
      "Action=CreateQueue&QueueName=q&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=40&Attribute.2.Name=Policy&Attribute.2.Value=%7B%7D&Tag.1.Key=team&Tag.1.Value=ml",
    );
    expect(input).toEqual({ QueueName: "q", Attributes: { VisibilityTimeout: "40", Policy: "{}" }, tags: { team: "ml" } });
  });

  it("orders list items by index number, not text (10 after 9)", () => {
    const pairs = Array.from({ length: 11 }, (_, i) => `AttributeName.${i + 1}=N${i + 1}`).reverse();
    const { input } = decodeForm(`Action=GetQueueAttributes&QueueUrl=q&${pairs.join("&")}`);
    expect(input.AttributeNames).toEqual(Array.from({ length: 11 }, (_, i) => `N${i + 1}`));
  });

  it("decodes message attributes with string and base64 binary values", () => {
    const { input } = decodeForm(
      "Action=SendMessage&QueueUrl=q&MessageBody=b&MessageAttribute.1.Name=s&MessageAttribute.1.Value.StringValue=x+y&MessageAttribute.1.Value.DataType=String" +
        "&MessageAttribute.2.Name=bin&MessageAttribute.2.Value.BinaryValue=AQID&MessageAttribute.2.Value.DataType=Binary" +
        "&MessageSystemAttribute.1.Name=AWSTraceHeader&MessageSystemAttribute.1.Value.StringValue=Root%3D1&MessageSystemAttribute.1.Value.DataType=String",
    );
    expect(input).toEqual({
      QueueUrl: "q",
      MessageBody: "b",
      MessageAttributes: { s: { StringValue: "x y", DataType: "String" }, bin: { BinaryValue: "AQID", DataType: "Binary" } },
      MessageSystemAttributes: { AWSTraceHeader: { StringValue: "Root=1", DataType: "String" } },
    });
  });

  it("decodes batch entries with nested attributes", () => {
    const { input } = decodeForm(
      "Action=SendMessageBatch&QueueUrl=q&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=one&SendMessageBatchRequestEntry.1.DelaySeconds=5" +
        "&SendMessageBatchRequestEntry.2.Id=b&SendMessageBatchRequestEntry.2.MessageBody=two&SendMessageBatchRequestEntry.2.MessageAttribute.1.Name=k" +
        "&SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue=v&SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType=String",
    );
    expect(input).toEqual({
      QueueUrl: "q",
      Entries: [
        { Id: "a", MessageBody: "one", DelaySeconds: "5" },
        { Id: "b", MessageBody: "two", MessageAttributes: { k: { StringValue: "v", DataType: "String" } } },
      ],
    });
  });

  it("decodes receive names, tag keys, and delete/visibility batch entries", () => {
    expect(decodeForm("Action=ReceiveMessage&QueueUrl=q&AttributeName.1=All&MessageAttributeName.1=a.*&MaxNumberOfMessages=10").input).toEqual({
      QueueUrl: "q",
      AttributeNames: ["All"],
      MessageAttributeNames: ["a.*"],
      MaxNumberOfMessages: "10",
    });
    expect(decodeForm("Action=UntagQueue&QueueUrl=q&TagKey.1=a&TagKey.2=b").input).toEqual({ QueueUrl: "q", TagKeys: ["a", "b"] });
    expect(decodeForm("Action=DeleteMessageBatch&QueueUrl=q&DeleteMessageBatchRequestEntry.1.Id=x&DeleteMessageBatchRequestEntry.1.ReceiptHandle=r").input).toEqual({
      QueueUrl: "q",
      Entries: [{ Id: "x", ReceiptHandle: "r" }],
    });
    expect(
      decodeForm("Action=ChangeMessageVisibilityBatch&QueueUrl=q&ChangeMessageVisibilityBatchRequestEntry.1.Id=x&ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle=r&ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout=0")
        .input,
    ).toEqual({ QueueUrl: "q", Entries: [{ Id: "x", ReceiptHandle: "r", VisibilityTimeout: "0" }] });
  });

  it("accepts the older `Name.member.N` list spelling", () => {
    expect(decodeForm("Action=UntagQueue&QueueUrl=q&TagKey.member.1=a&TagKey.member.2=b").input).toEqual({ QueueUrl: "q", TagKeys: ["a", "b"] });
  });

  it("keeps characters that need care: + is a space, %2B a plus, CR LF survive", () => {
    expect(decodeForm("Action=SendMessage&QueueUrl=q&MessageBody=a+b%2Bc%0D%0Ad").input.MessageBody).toBe("a b+c\r\nd");
  });
});

describe("query parameters no action reads", () => {
  function refusal(form: string): { errorName: string; message: string } {
    try {
      decodeForm(form);
    } catch (err) {
      if (err instanceof SqsProtocolError) return { errorName: err.errorName, message: err.message };
      throw err;
    }
    throw new Error(`accepted: ${form}`);
  }

  it("are refused with InvalidQueryParameter naming the parameter, wherever they sit", () => {
    const cases: Array<[string, string]> = [
      ["Action=CreateQueue&QueueName=q&Attribute[1].Name=VisibilityTimeout&Attribute[1].Value=40", "Attribute[1].Name"],
      ["Action=CreateQueue&QueueName=q&Bogus.1.Name=x", "Bogus.1.Name"],
      ["Action=CreateQueue&QueueName=q&Attribute.1.Name=VisibilityTimeout&Attribute.1.Valeu=40", "Attribute.1.Valeu"],
      ["Action=CreateQueue&QueueName=q&Attribute.x.Name=VisibilityTimeout", "Attribute.x.Name"],
      ["Action=CreateQueue&QueueName=q&Attribute=x", "Attribute"],
      ["Action=CreateQueue&QueueName.1=q", "QueueName.1"],
      ["Action=CreateQueue&QueueName=q&Tags.1.Key=a&Tags.1.Value=b", "Tags.1.Key"],
      ["Action=SendMessage&QueueUrl=q&MessageBody=b&MessageAttribute.1.Name=a&MessageAttribute.1.Value.StringValu=x", "MessageAttribute.1.Value.StringValu"],
      ["Action=SendMessageBatch&QueueUrl=q&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.Body=x", "SendMessageBatchRequestEntry.1.Body"],
      ["Action=UntagQueue&QueueUrl=q&TagKey.member.1=a&TagKey.2=b", "TagKey.2"],
      ["Action=ListQueues&QueueUrl=q", "QueueUrl"],
      ["Action=UntagQueue&QueueUrl=q&TagKeys=a", "TagKeys"],
    ];
    for (const [form, key] of cases) {
      expect(refusal(form), form).toEqual({ errorName: "InvalidQueryParameter", message: `The parameter ${key} is not valid for the action ${form.slice(7, form.indexOf("&"))}.` });
    }
  });

  it("accepts what clients send beside the input: Version, presigned and SigV2 signatures, empty lists", () => {
    const presigned = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=k%2F20260101%2Fus-east-1%2Fsqs%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=ab&X-Amz-Security-Token=t";
    expect(decodeForm(`Action=ListQueues&Version=2012-11-05&${presigned}`).input).toEqual({});
    expect(decodeForm("Action=ListQueues&AWSAccessKeyId=k&SignatureVersion=2&SignatureMethod=HmacSHA256&Signature=s&Timestamp=t&Expires=e&SecurityToken=x").input).toEqual({});
    // aws-sdk v2 spells an empty list by its xmlName, botocore by the member's name.
    expect(decodeForm("Action=SendMessageBatch&QueueUrl=q&SendMessageBatchRequestEntry=").input).toEqual({ QueueUrl: "q", Entries: [] });
    expect(decodeForm("Action=SendMessageBatch&QueueUrl=q&Entries=").input).toEqual({ QueueUrl: "q", Entries: [] });
    expect(decodeForm("Action=UntagQueue&QueueUrl=q&TagKeys=").input).toEqual({ QueueUrl: "q", TagKeys: [] });
  });

  it("refuses a map entry without its name, rather than dropping its value", () => {
    expect(() => decodeForm("Action=CreateQueue&QueueName=q&Attribute.1.Value=40")).toThrow("The request must contain the parameter Attribute.1.Name.");
  });
});

describe("JSON bodies", () => {
  it("parses an object, and an empty body as {}", () => {
    expect(decodeJsonInput('{"QueueName":"q"}')).toEqual({ QueueName: "q" });
    expect(decodeJsonInput("")).toEqual({});
  });

  it("rejects junk and non-objects with SerializationException", () => {
    for (const body of ["{", "[1]", '"x"', "null"]) {
      try {
        decodeJsonInput(body);
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(SqsProtocolError);
        expect((err as SqsProtocolError).errorName).toBe("SerializationException");
      }
    }
  });
});

describe("XML", () => {
  it("escapes markup characters and CR (as &#xD;, so it survives XML parsing)", () => {
    expect(escapeXml(`a<b>&"c'\r\n\t`)).toBe("a&lt;b&gt;&amp;&quot;c&apos;&#xD;\n\t");
    expect(escapeXml("plain text ✓ 😀")).toBe("plain text ✓ 😀");
  });

  it("replaces characters XML 1.0 cannot carry", () => {
    expect(escapeXml("a\u0000b\u001Fc\uD800d")).toBe("a\uFFFDb\uFFFDc\uFFFDd");
  });

  it("wraps results in the SQS envelope and namespace", () => {
    expect(xmlResponse("GetQueueUrl", "<QueueUrl>u</QueueUrl>", "rid")).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<GetQueueUrlResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><GetQueueUrlResult><QueueUrl>u</QueueUrl></GetQueueUrlResult><ResponseMetadata><RequestId>rid</RequestId></ResponseMetadata></GetQueueUrlResponse>',
    );
    expect(xmlResponse("DeleteQueue", undefined, "rid")).not.toContain("DeleteQueueResult");
  });

  it("formats errors as ErrorResponse", () => {
    const xml = xmlErrorResponse({ shape: "QueueDoesNotExist", queryCode: "AWS.SimpleQueueService.NonExistentQueue", httpStatus: 400, fault: "Sender", message: "no <queue>" }, "rid");
    expect(xml).toContain("<Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code><Message>no &lt;queue&gt;</Message><Detail/></Error><RequestId>rid</RequestId>");
  });
});

describe("queue URLs", () => {
  it("takes the last path segment as the name, ignoring the host", () => {
    expect(queueNameFromUrl("http://elsewhere:1234/000000000000/jobs", "000000000000")).toBe("jobs");
    expect(queueNameFromUrl("https://sqs.us-east-1.amazonaws.com/000000000000/a.fifo", "000000000000")).toBe("a.fifo");
    expect(queueNameFromUrl("/000000000000/jobs", "000000000000")).toBe("jobs");
    expect(queueNameFromUrl("jobs", "000000000000")).toBe("jobs");
  });

  it("rejects another account's queue and URLs without a name", () => {
    for (const url of ["http://h/123456789012/jobs", "http://h/", ""]) {
      try {
        queueNameFromUrl(url, "000000000000");
        expect.unreachable();
      } catch (err) {
        expect((err as SluiceError).code).toBe("QueueNotFound");
      }
    }
  });
});
