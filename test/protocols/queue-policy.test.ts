/**
 * Queue policies as another account's grant: the documents AddPermission writes, and hand-written
 * ones with wildcards, lists, NotPrincipal/NotAction, Deny and Conditions.
 */
import { describe, expect, it } from "vitest";
import { crossAccountActionOf, queuePolicyAllows } from "../../src/protocols/sqs/queue-policy.js";

const owner = "111111111111";
const other = "222222222222";
const third = "333333333333";
const queueArn = `arn:aws:sqs:us-east-1:${owner}:shared`;

const policy = (...statements: object[]): string => JSON.stringify({ Version: "2012-10-17", Statement: statements });
const allows = (text: string | undefined, action: string, caller = other, arn = queueArn): boolean => queuePolicyAllows(text, { callerAccountId: caller, action, queueArn: arn });

describe("queuePolicyAllows", () => {
  it("grants nothing without a policy, or with one that isn't JSON or has no statements", () => {
    expect(allows(undefined, "SendMessage")).toBe(false);
    expect(allows("not json", "SendMessage")).toBe(false);
    expect(allows("{}", "SendMessage")).toBe(false);
    expect(allows(policy(), "SendMessage")).toBe(false);
  });

  it("reads the statement AddPermission writes: account root ARNs, SQS:-prefixed actions, the queue's ARN", () => {
    const text = JSON.stringify({
      Version: "2008-10-17",
      Id: `${queueArn}/SQSDefaultPolicy`,
      Statement: [{ Sid: "send", Effect: "Allow", Principal: { AWS: `arn:aws:iam::${other}:root` }, Action: "SQS:SendMessage", Resource: queueArn }],
    });
    expect(allows(text, "SendMessage")).toBe(true);
    expect(allows(text, "SendMessageBatch")).toBe(true);
    expect(allows(text, "ReceiveMessage")).toBe(false);
    expect(allows(text, "SendMessage", third)).toBe(false);
    expect(allows(text, "SendMessage", other, `arn:aws:sqs:us-east-1:${owner}:another`)).toBe(false);
  });

  it("takes lists, bare account ids, `*` principals and action wildcards in any case", () => {
    const text = policy({ Effect: "Allow", Principal: { AWS: [other, `arn:aws:iam::${third}:root`] }, Action: ["sqs:Receive*", "SQS:deletemessage"], Resource: `arn:aws:sqs:*:${owner}:*` });
    expect(allows(text, "ReceiveMessage")).toBe(true);
    expect(allows(text, "DeleteMessageBatch", third)).toBe(true);
    expect(allows(text, "SendMessage")).toBe(false);
    const everyone = policy({ Effect: "Allow", Principal: "*", Action: "*" });
    expect(allows(everyone, "PurgeQueue", third)).toBe(true);
    expect(allows(policy({ Effect: "Allow", Principal: { AWS: "*" }, Action: "sqs:*", Resource: queueArn }), "GetQueueUrl")).toBe(true);
  });

  it("never grants what no policy can grant to another account", () => {
    const everyone = policy({ Effect: "Allow", Principal: "*", Action: "*", Resource: "*" });
    for (const action of ["DeleteQueue", "SetQueueAttributes", "AddPermission", "RemovePermission", "TagQueue", "ListQueues", "CreateQueue", "StartMessageMoveTask"]) {
      expect(crossAccountActionOf(action)).toBeUndefined();
      expect(allows(everyone, action)).toBe(false);
    }
  });

  it("lets a Deny win over any Allow", () => {
    const text = policy(
      { Effect: "Allow", Principal: "*", Action: "sqs:*", Resource: queueArn },
      { Effect: "Deny", Principal: { AWS: other }, Action: "sqs:PurgeQueue", Resource: queueArn },
    );
    expect(allows(text, "PurgeQueue")).toBe(false);
    expect(allows(text, "PurgeQueue", third)).toBe(true);
    expect(allows(text, "SendMessage")).toBe(true);
  });

  it("grants nothing with an Allow it can't evaluate (a Condition), and denies with a Deny it can't", () => {
    const conditionalAllow = policy({ Effect: "Allow", Principal: "*", Action: "sqs:SendMessage", Resource: queueArn, Condition: { ArnEquals: { "aws:SourceArn": "arn:aws:sns:us-east-1:1:t" } } });
    expect(allows(conditionalAllow, "SendMessage")).toBe(false);
    const conditionalDeny = policy(
      { Effect: "Allow", Principal: { AWS: other }, Action: "sqs:SendMessage" },
      { Effect: "Deny", Principal: "*", Action: "sqs:*", Condition: { Bool: { "aws:SecureTransport": "false" } } },
    );
    expect(allows(conditionalDeny, "SendMessage")).toBe(false);
    const unreadableDeny = policy({ Effect: "Allow", Principal: { AWS: other }, Action: "sqs:SendMessage" }, { Effect: "Deny", Principal: 42, Action: "sqs:*" });
    expect(allows(unreadableDeny, "SendMessage")).toBe(false);
  });

  it("reads NotPrincipal and NotAction as everything they don't list", () => {
    const text = policy({ Effect: "Allow", NotPrincipal: { AWS: third }, NotAction: "sqs:PurgeQueue", Resource: queueArn });
    expect(allows(text, "ReceiveMessage")).toBe(true);
    expect(allows(text, "PurgeQueue")).toBe(false);
    expect(allows(text, "ReceiveMessage", third)).toBe(false);
  });

  it("matches only account principals: user and role ARNs, services and junk name no account", () => {
    for (const principal of [{ AWS: `arn:aws:iam::${other}:user/alice` }, { Service: "sns.amazonaws.com" }, { AWS: "22222222222" }, { AWS: [] }, "everyone"]) {
      expect(allows(policy({ Effect: "Allow", Principal: principal, Action: "*" }), "SendMessage")).toBe(false);
    }
  });

  it("treats wildcard characters in ARNs literally only where they aren't wildcards", () => {
    expect(allows(policy({ Effect: "Allow", Principal: "*", Action: "*", Resource: `arn:aws:sqs:us-east-1:${owner}:sha?ed` }), "SendMessage")).toBe(true);
    expect(allows(policy({ Effect: "Allow", Principal: "*", Action: "*", Resource: `arn:aws:sqs:us-east-1:${owner}:shared.` }), "SendMessage")).toBe(false);
    expect(allows(policy({ Effect: "Allow", Principal: "*", Action: "*", Resource: `arn:aws:sqs:us-east-1:${owner}:Shared` }), "SendMessage")).toBe(false);
  });
});
