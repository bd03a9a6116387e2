/** AddPermission / RemovePermission: the queue's Policy document (IAM JSON), edited by the SQS layer. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addPermission, removePermission } from "../../src/protocols/sqs/permission-statements.js";
import { type ServiceHarness, errorOf, openServiceHarness } from "../core/service-harness.js";

let h: ServiceHarness;
beforeEach(() => {
  h = openServiceHarness();
});
afterEach(async () => {
  await h.close();
});

describe("AddPermission / RemovePermission", () => {
  const queueArn = "arn:aws:sqs:us-east-1:000000000000:q";

  it("maintain one Policy statement per label", async () => {
    await h.service.createQueue("", { name: "q" });
    await addPermission(h.service.forAccount(""), "q", { label: "send", accountIds: ["111122223333"], actions: ["SendMessage"], queueArn });
    await addPermission(h.service.forAccount(""), "q", { label: "both", accountIds: ["111122223333", "444455556666"], actions: ["ReceiveMessage", "DeleteMessage"], queueArn });
    const policy = JSON.parse((await h.service.getQueue("", "q")).config.policy!);
    expect(policy).toMatchObject({ Version: "2008-10-17", Id: `${queueArn}/SQSDefaultPolicy` });
    expect(policy.Statement).toEqual([
      { Sid: "send", Effect: "Allow", Principal: { AWS: "arn:aws:iam::111122223333:root" }, Action: "SQS:SendMessage", Resource: queueArn },
      {
        Sid: "both",
        Effect: "Allow",
        Principal: { AWS: ["arn:aws:iam::111122223333:root", "arn:aws:iam::444455556666:root"] },
        Action: ["SQS:ReceiveMessage", "SQS:DeleteMessage"],
        Resource: queueArn,
      },
    ]);
    await removePermission(h.service.forAccount(""), "q", "send");
    expect(JSON.parse((await h.service.getQueue("", "q")).config.policy!).Statement.map((s: { Sid: string }) => s.Sid)).toEqual(["both"]);
    await removePermission(h.service.forAccount(""), "q", "both");
    expect((await h.service.getQueue("", "q")).config.policy).toBeUndefined();
  });

  it("reject duplicate or unknown labels, bad accounts and actions", async () => {
    await h.service.createQueue("", { name: "q" });
    const ok = { label: "l", accountIds: ["111122223333"], actions: ["SendMessage"], queueArn };
    await addPermission(h.service.forAccount(""), "q", ok);
    expect((await errorOf(addPermission(h.service.forAccount(""), "q", ok))).message).toMatch(/Already exists/);
    expect((await errorOf(removePermission(h.service.forAccount(""), "q", "nope"))).message).toMatch(/can't find label/);
    expect((await errorOf(addPermission(h.service.forAccount(""), "q", { ...ok, label: "x", accountIds: ["123"] }))).code).toBe("InvalidParameterValue");
    expect((await errorOf(addPermission(h.service.forAccount(""), "q", { ...ok, label: "x", actions: ["CreateQueue"] }))).code).toBe("InvalidParameterValue");
    expect((await errorOf(addPermission(h.service.forAccount(""), "q", { ...ok, label: "bad label" }))).code).toBe("InvalidParameterValue");
    expect((await errorOf(addPermission(h.service.forAccount(""), "nope", { ...ok, label: "x" }))).code).toBe("QueueNotFound");
  });
});
