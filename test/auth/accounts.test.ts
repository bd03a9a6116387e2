/**
 * Accounts through a real server and the real clients (@aws-sdk/client-sqs v3 on JSON, aws-sdk v2
 * on query): each account has its own queues, URLs and ListQueues; another account's queue answers
 * AccessDenied (whether or not it exists) until AddPermission or the queue's Policy grants the
 * caller's account the action, and RemovePermission takes it back; a dead-letter redrive stays in
 * its account. The jobs API works on the bearer token's account (test/jobs-e2e/accounts.test.ts).
 */
import {
  AddPermissionCommand,
  CancelMessageMoveTaskCommand,
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueUrlCommand,
  ListMessageMoveTasksCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  RemovePermissionCommand,
  SQSClient,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";
import AWS from "aws-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { v2ErrorOf, v3ErrorOf } from "../support/sqs-errors.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { accountA, accountB, credentialsToml, keys, tokens, writeCredentials } from "./fixtures.js";

const accountC = "333333333333";
const stranger = { accessKeyId: "AKIDSTRANGERC", secretAccessKey: "stranger-secret-0123456789abcdef" };
const tokenB = "tok-admin-b-0123456789abcdef";
type Key = { accessKeyId: string; secretAccessKey: string };

let srv: TestServer;

const v3 = (key: Key): SQSClient => new SQSClient({ endpoint: srv.url, region: "us-east-1", credentials: key, maxAttempts: 1 });
const v2 = (key: Key): AWS.SQS => new AWS.SQS({ endpoint: srv.url, region: "us-east-1", credentials: new AWS.Credentials(key), maxRetries: 0, apiVersion: "2012-11-05" });
const urlOf = (account: string, name: string): string => `${srv.url}/${account}/${name}`;

const v3Error = (key: Key, command: object) => v3ErrorOf(v3(key), command);
const v2Error = v2ErrorOf;

async function bodies(key: Key, queueUrl: string): Promise<string[]> {
  const { Messages } = await v3(key).send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }));
  return (Messages ?? []).map((m) => m.Body!).sort();
}

beforeAll(async () => {
  const dir = await makeTempDir("sluice-accounts-");
  const text = `${credentialsToml()}
[[keys]]
accessKeyId = "${stranger.accessKeyId}"
secretAccessKey = "${stranger.secretAccessKey}"
accountId = "${accountC}"

[[tokens]]
name = "admin-b"
token = "${tokenB}"
accountId = "${accountB}"
`;
  srv = await startTestServer({ config: { credentialsFile: await writeCredentials(dir, "credentials.toml", text), accountId: accountA } });
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

describe("each account has its own queues", () => {
  it("the same name in two accounts is two queues, with URLs that carry each account (v3, JSON)", async () => {
    const a = await v3(keys.admin).send(new CreateQueueCommand({ QueueName: "orders" }));
    const b = await v3(keys.other).send(new CreateQueueCommand({ QueueName: "orders" }));
    expect(a.QueueUrl).toBe(urlOf(accountA, "orders"));
    expect(b.QueueUrl).toBe(urlOf(accountB, "orders"));
    await v3(keys.admin).send(new SendMessageCommand({ QueueUrl: a.QueueUrl, MessageBody: "for A" }));
    await v3(keys.other).send(new SendMessageCommand({ QueueUrl: b.QueueUrl, MessageBody: "for B" }));
    expect(await bodies(keys.admin, a.QueueUrl!)).toEqual(["for A"]);
    expect(await bodies(keys.other, b.QueueUrl!)).toEqual(["for B"]);
    expect((await v3(keys.other).send(new GetQueueUrlCommand({ QueueName: "orders" }))).QueueUrl).toBe(b.QueueUrl);
  });

  it("ListQueues lists only the caller's queues (v2, query)", async () => {
    await v2(keys.other).createQueue({ QueueName: "only-b" }).promise();
    await v2(keys.admin).createQueue({ QueueName: "only-a" }).promise();
    const listB = await v2(keys.other).listQueues({}).promise();
    expect(listB.QueueUrls).toEqual(expect.arrayContaining([urlOf(accountB, "only-b"), urlOf(accountB, "orders")]));
    expect(listB.QueueUrls!.every((u) => u.includes(`/${accountB}/`))).toBe(true);
    const listA = (await v2(keys.admin).listQueues({}).promise()).QueueUrls!;
    expect(listA).toContain(urlOf(accountA, "only-a"));
    expect(listA.some((u) => u.endsWith("/only-b") || u.includes(`/${accountB}/`))).toBe(false);
    expect((await v3(stranger).send(new ListQueuesCommand({}))).QueueUrls ?? []).toEqual([]);
  });

  it("another account's queue is AccessDenied 403, whether it exists or not, on both protocols", async () => {
    await v3(keys.admin).send(new CreateQueueCommand({ QueueName: "private" }));
    for (const name of ["private", "no-such-queue"]) {
      const denied = await v3Error(keys.other, new SendMessageCommand({ QueueUrl: urlOf(accountA, name), MessageBody: "intruder" }));
      expect(denied).toMatchObject({ name: "AccessDenied", status: 403 });
      expect(denied.message).toContain(`/${accountA}/${name} is denied`);
      expect(await v2Error(v2(keys.other).receiveMessage({ QueueUrl: urlOf(accountA, name) }))).toEqual({ code: "AccessDenied", statusCode: 403 });
      expect(await v3Error(keys.other, new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: accountA }))).toMatchObject({ name: "AccessDenied", status: 403 });
    }
    expect(await bodies(keys.admin, urlOf(accountA, "private"))).toEqual([]);
  });

  it("the jobs API works on the token's own account: a job queue made with B's token is B's SQS queue", async () => {
    const put = (token: string): Promise<Response> =>
      fetch(`${srv.url}/v1/queues/jobs-a`, { method: "PUT", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
    expect((await put(tokens.admin.token)).status).toBe(200);
    expect((await v3(keys.admin).send(new GetQueueUrlCommand({ QueueName: "jobs-a" }))).QueueUrl).toBe(urlOf(accountA, "jobs-a"));
    expect(await v3Error(keys.other, new GetQueueUrlCommand({ QueueName: "jobs-a" }))).toMatchObject({ name: "QueueDoesNotExist" });
    expect((await put(tokenB)).status).toBe(200);
    expect((await v3(keys.other).send(new GetQueueUrlCommand({ QueueName: "jobs-a" }))).QueueUrl).toBe(urlOf(accountB, "jobs-a"));
  });

  it("a dead-letter redrive (message move task) stays within its account", async () => {
    const arn = (account: string, name: string): string => `arn:aws:sqs:us-east-1:${account}:${name}`;
    for (const key of [keys.admin, keys.other]) {
      await v3(key).send(new CreateQueueCommand({ QueueName: "redrive-dlq" }));
      await v3(key).send(new CreateQueueCommand({ QueueName: "redrive-src", Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn(key.accountId, "redrive-dlq"), maxReceiveCount: 1 }) } }));
    }
    const source = urlOf(accountB, "redrive-src");
    await v3(keys.other).send(new SendMessageCommand({ QueueUrl: source, MessageBody: "poison" }));
    // Received once (its limit), then moved to B's dead-letter queue by the next receive.
    await v3(keys.other).send(new ReceiveMessageCommand({ QueueUrl: source, VisibilityTimeout: 0 }));
    expect((await v3(keys.other).send(new ReceiveMessageCommand({ QueueUrl: source }))).Messages ?? []).toEqual([]);
    expect(await bodies(keys.other, urlOf(accountB, "redrive-dlq"))).toEqual(["poison"]);

    const { TaskHandle } = await v3(keys.other).send(new StartMessageMoveTaskCommand({ SourceArn: arn(accountB, "redrive-dlq") }));
    const { Messages } = await v3(keys.other).send(new ReceiveMessageCommand({ QueueUrl: source, WaitTimeSeconds: 20 }));
    expect(Messages?.map((m) => m.Body)).toEqual(["poison"]);
    expect(await bodies(keys.admin, urlOf(accountA, "redrive-src"))).toEqual([]);
    const listed = await v3(keys.other).send(new ListMessageMoveTasksCommand({ SourceArn: arn(accountB, "redrive-dlq") }));
    expect(listed.Results?.[0]).toMatchObject({ SourceArn: arn(accountB, "redrive-dlq") });
    // The own account's queue of the same name has no task, and can't cancel the other account's.
    expect((await v3(keys.admin).send(new ListMessageMoveTasksCommand({ SourceArn: arn(accountA, "redrive-dlq") }))).Results ?? []).toEqual([]);
    expect(await v3Error(keys.admin, new CancelMessageMoveTaskCommand({ TaskHandle }))).toMatchObject({ name: "ResourceNotFoundException" });
  });
});

describe("AddPermission, RemovePermission and the Policy attribute grant another account actions", () => {
  it("AddPermission grants the named actions to the named account only; RemovePermission takes them back (v3)", async () => {
    const { QueueUrl } = await v3(keys.admin).send(new CreateQueueCommand({ QueueName: "shared" }));
    await v3(keys.admin).send(new AddPermissionCommand({ QueueUrl, Label: "b-sends", AWSAccountIds: [accountB], Actions: ["SendMessage", "GetQueueUrl"] }));
    expect((await v3(keys.other).send(new GetQueueUrlCommand({ QueueName: "shared", QueueOwnerAWSAccountId: accountA }))).QueueUrl).toBe(QueueUrl);
    await v3(keys.other).send(new SendMessageCommand({ QueueUrl, MessageBody: "from B" }));
    expect(await v3Error(keys.other, new ReceiveMessageCommand({ QueueUrl }))).toMatchObject({ name: "AccessDenied", status: 403 });
    expect(await v3Error(keys.other, new DeleteQueueCommand({ QueueUrl }))).toMatchObject({ name: "AccessDenied", status: 403 });
    expect(await v3Error(stranger, new SendMessageCommand({ QueueUrl, MessageBody: "from C" }))).toMatchObject({ name: "AccessDenied", status: 403 });
    expect(await bodies(keys.admin, QueueUrl!)).toEqual(["from B"]);
    // Only the owner manages its queue's permissions.
    expect(await v3Error(keys.other, new AddPermissionCommand({ QueueUrl, Label: "self", AWSAccountIds: [accountB], Actions: ["ReceiveMessage"] }))).toMatchObject({ name: "AccessDenied" });
    await v3(keys.admin).send(new RemovePermissionCommand({ QueueUrl, Label: "b-sends" }));
    expect(await v3Error(keys.other, new SendMessageCommand({ QueueUrl, MessageBody: "again" }))).toMatchObject({ name: "AccessDenied", status: 403 });
  });

  it("a Policy set with SetQueueAttributes lets another account receive and delete, and nothing more (v2, query)", async () => {
    const { QueueUrl } = await v2(keys.admin).createQueue({ QueueName: "work" }).promise();
    const arn = `arn:aws:sqs:us-east-1:${accountA}:work`;
    const policy = {
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Principal: { AWS: `arn:aws:iam::${accountB}:root` }, Action: ["sqs:ReceiveMessage", "sqs:DeleteMessage"], Resource: arn }],
    };
    await v2(keys.admin).setQueueAttributes({ QueueUrl: QueueUrl!, Attributes: { Policy: JSON.stringify(policy) } }).promise();
    await v2(keys.admin).sendMessage({ QueueUrl: QueueUrl!, MessageBody: "task" }).promise();
    const got = await v2(keys.other).receiveMessage({ QueueUrl: QueueUrl!, MaxNumberOfMessages: 10 }).promise();
    expect(got.Messages?.map((m) => m.Body)).toEqual(["task"]);
    await v2(keys.other).deleteMessage({ QueueUrl: QueueUrl!, ReceiptHandle: got.Messages![0]!.ReceiptHandle! }).promise();
    expect(await v2Error(v2(keys.other).sendMessage({ QueueUrl: QueueUrl!, MessageBody: "no" }))).toEqual({ code: "AccessDenied", statusCode: 403 });
    expect(await v2Error(v2(keys.other).purgeQueue({ QueueUrl: QueueUrl! }))).toEqual({ code: "AccessDenied", statusCode: 403 });
    expect(await v2Error(v2(stranger).receiveMessage({ QueueUrl: QueueUrl! }))).toEqual({ code: "AccessDenied", statusCode: 403 });
    // B's delete was real: the message is gone for the owner too.
    expect(await bodies(keys.admin, QueueUrl!)).toEqual([]);
  });
});
