/**
 * SigV4 on both SQS protocols, through a real server and the real clients: @aws-sdk/client-sqs v3
 * (JSON), aws-sdk 2.1490.0 (query), Debian's boto3 and aws CLI; right and wrong keys, unknown
 * keys, session tokens, scopes, the clock-skew window, payload hashes and presigned URLs — each
 * failure with SQS's own error code and status.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient, SendMessageCommand } from "@aws-sdk/client-sqs";
import { SignatureV4 } from "@smithy/signature-v4";
import AWS from "aws-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeSha256 } from "../../src/protocols/auth/sha256.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { accountA, keys, writeCredentials } from "./fixtures.js";

const run = promisify(execFile);
type Key = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

let srv: TestServer;
let host: string;

function v3(key: Key): SQSClient {
  return new SQSClient({ endpoint: srv.url, region: "us-east-1", credentials: key, maxAttempts: 1 });
}

function v2(key: Key): AWS.SQS {
  return new AWS.SQS({ endpoint: srv.url, region: "us-east-1", credentials: new AWS.Credentials(key), maxRetries: 0, apiVersion: "2012-11-05" });
}

async function v3Error(key: Key, command: SendMessageCommand | CreateQueueCommand | ReceiveMessageCommand): Promise<{ name: string; status: number | undefined; message: string }> {
  const err = (await v3(key).send(command as SendMessageCommand).then(
    () => undefined,
    (e: unknown) => e,
  )) as { name: string; message: string; $metadata?: { httpStatusCode?: number } } | undefined;
  if (!err) throw new Error("the request succeeded");
  return { name: err.name, status: err.$metadata?.httpStatusCode, message: err.message };
}

function signer(key: Key): SignatureV4 {
  return new SignatureV4({ credentials: key, region: "us-east-1", service: "sqs", sha256: NodeSha256 });
}

/** A query-protocol request signed by hand (headers as given), sent with fetch. */
async function signedQuery(key: Key, params: Record<string, string>, opts: { signingDate?: Date; headers?: Record<string, string>; bodyOverride?: string } = {}): Promise<{ status: number; body: string }> {
  const body = new URLSearchParams({ Version: "2012-11-05", ...params }).toString();
  const request = { method: "POST", protocol: "http:", hostname: host.split(":")[0]!, port: Number(host.split(":")[1]), path: "/", query: {}, headers: { host, "content-type": "application/x-www-form-urlencoded", ...opts.headers }, body };
  const signed = await signer(key).sign(request, { signingDate: opts.signingDate ?? new Date() });
  const res = await fetch(`${srv.url}/`, { method: "POST", headers: signed.headers, body: opts.bodyOverride ?? body });
  return { status: res.status, body: await res.text() };
}

async function presignedUrl(key: Key, params: Record<string, string>, expiresIn: number, signingDate = new Date()): Promise<string> {
  const query = { Version: "2012-11-05", ...params };
  const presigned = await signer(key).presign({ method: "GET", protocol: "http:", hostname: host.split(":")[0]!, port: Number(host.split(":")[1]), path: "/", query, headers: { host } }, { expiresIn, signingDate });
  const search = new URLSearchParams(presigned.query as Record<string, string>).toString().replace(/\+/g, "%20");
  return `${srv.url}/?${search}`;
}

beforeAll(async () => {
  const dir = await makeTempDir("sluice-sigv4-");
  srv = await startTestServer({ config: { credentialsFile: await writeCredentials(dir), accountId: accountA } });
  host = new URL(srv.url).host;
  await v3(keys.admin).send(new CreateQueueCommand({ QueueName: "signed" }));
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

const queueUrl = (): string => `${srv.url}/${accountA}/signed`;

describe("SigV4 with @aws-sdk/client-sqs v3 (JSON protocol)", () => {
  it("serves a request signed with a configured key", async () => {
    await v3(keys.admin).send(new SendMessageCommand({ QueueUrl: queueUrl(), MessageBody: "v3" }));
    const { Messages } = await v3(keys.admin).send(new ReceiveMessageCommand({ QueueUrl: queueUrl(), MaxNumberOfMessages: 10 }));
    expect(Messages?.map((m) => m.Body)).toContain("v3");
  });

  it("refuses a wrong secret (SignatureDoesNotMatch 403) and an unknown key (InvalidClientTokenId 403)", async () => {
    const send = new SendMessageCommand({ QueueUrl: queueUrl(), MessageBody: "no" });
    expect(await v3Error({ ...keys.admin, secretAccessKey: "wrong-secret-0123456789abcdef" }, send)).toMatchObject({ name: "SignatureDoesNotMatch", status: 403 });
    expect(await v3Error({ accessKeyId: "AKIDNOBODY", secretAccessKey: keys.admin.secretAccessKey }, send)).toMatchObject({ name: "InvalidClientTokenId", status: 403 });
  });

  it("needs the session token of a key that has one, and only that one", async () => {
    await v3(keys.session).send(new SendMessageCommand({ QueueUrl: queueUrl(), MessageBody: "with token" }));
    const send = new SendMessageCommand({ QueueUrl: queueUrl(), MessageBody: "no" });
    expect(await v3Error({ accessKeyId: keys.session.accessKeyId, secretAccessKey: keys.session.secretAccessKey }, send)).toMatchObject({ name: "InvalidClientTokenId", status: 403 });
    expect(await v3Error({ ...keys.session, sessionToken: "another-token" }, send)).toMatchObject({ name: "InvalidClientTokenId" });
    expect(await v3Error({ ...keys.admin, sessionToken: "a-token-the-key-has-not" }, send)).toMatchObject({ name: "InvalidClientTokenId" });
  });

  it("checks scopes: a submit-only key sends but may not receive or create queues (AccessDenied 403)", async () => {
    await v3(keys.sender).send(new SendMessageCommand({ QueueUrl: queueUrl(), MessageBody: "from sender" }));
    expect(await v3Error(keys.sender, new ReceiveMessageCommand({ QueueUrl: queueUrl() }))).toMatchObject({ name: "AccessDenied", status: 403 });
    expect(await v3Error(keys.sender, new CreateQueueCommand({ QueueName: "nope" }))).toMatchObject({ name: "AccessDenied" });
  });
});

describe("SigV4 with aws-sdk v2 (query protocol)", () => {
  it("serves the right key and refuses a wrong one", async () => {
    await v2(keys.admin).sendMessage({ QueueUrl: queueUrl(), MessageBody: "v2" }).promise();
    const err = (await v2({ ...keys.admin, secretAccessKey: "wrong-secret-0123456789abcdef" })
      .sendMessage({ QueueUrl: queueUrl(), MessageBody: "no" })
      .promise()
      .then(
        () => undefined,
        (e: unknown) => e,
      )) as { code: string; statusCode: number };
    expect(err).toMatchObject({ code: "SignatureDoesNotMatch", statusCode: 403 });
  });
});

describe("SigV4 failures, one SQS error each", () => {
  const send = { Action: "SendMessage", QueueUrl: `http://x/${accountA}/signed`, MessageBody: "raw" };

  it("unsigned: MissingAuthenticationToken 403 (JSON fast path and query alike)", async () => {
    const json = await fetch(`${srv.url}/`, { method: "POST", headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.ListQueues" }, body: "{}" });
    expect(json.status).toBe(403);
    expect(json.headers.get("x-amzn-query-error")).toBe("MissingAuthenticationToken;Sender");
    const query = await fetch(`${srv.url}/?Action=ListQueues&Version=2012-11-05`);
    expect(query.status).toBe(403);
    expect(await query.text()).toContain("<Code>MissingAuthenticationToken</Code>");
  });

  it("garbage or a malformed signature: IncompleteSignature 400; a zero signature: SignatureDoesNotMatch 403", async () => {
    const date = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
    const cases: Array<[string, number, string]> = [
      ["garbage", 400, "IncompleteSignature"],
      [`AWS4-HMAC-SHA256 Credential=${keys.admin.accessKeyId}/${date.slice(0, 8)}/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=deadbeef`, 400, "IncompleteSignature"],
      [`AWS4-HMAC-SHA256 Credential=${keys.admin.accessKeyId}/${date.slice(0, 8)}/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"0".repeat(64)}`, 403, "SignatureDoesNotMatch"],
    ];
    for (const [authorization, status, code] of cases) {
      const res = await fetch(`${srv.url}/?Action=ListQueues&Version=2012-11-05`, { headers: { authorization, "x-amz-date": date } });
      expect(res.status, authorization).toBe(status);
      expect(await res.text(), authorization).toContain(`<Code>${code}</Code>`);
    }
  });

  it("a signature dated more than 15 minutes off: RequestExpired 400; within the window: served", async () => {
    const old = await signedQuery(keys.admin, send, { signingDate: new Date(Date.now() - 16 * 60_000) });
    expect(old.status).toBe(400);
    expect(old.body).toContain("<Code>RequestExpired</Code>");
    const future = await signedQuery(keys.admin, send, { signingDate: new Date(Date.now() + 16 * 60_000) });
    expect(future.body).toContain("<Code>RequestExpired</Code>");
    expect((await signedQuery(keys.admin, send, { signingDate: new Date(Date.now() - 10 * 60_000) })).status).toBe(200);
  });

  it("a body changed after signing, or not matching its x-amz-content-sha256: SignatureDoesNotMatch; UNSIGNED-PAYLOAD: served", async () => {
    const changed = await signedQuery(keys.admin, send, { bodyOverride: new URLSearchParams({ Version: "2012-11-05", ...send, MessageBody: "changed" }).toString() });
    expect(changed.status).toBe(403);
    expect(changed.body).toContain("<Code>SignatureDoesNotMatch</Code>");
    const wrongHash = await signedQuery(keys.admin, send, { headers: { "x-amz-content-sha256": "a".repeat(64) } });
    expect(wrongHash.body).toContain("<Code>SignatureDoesNotMatch</Code>");
    const unsigned = await signedQuery(keys.admin, send, { headers: { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" } });
    expect(unsigned.status).toBe(200);
    const chunked = await signedQuery(keys.admin, send, { headers: { "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" } });
    expect(chunked.body).toContain("<Code>IncompleteSignature</Code>");
  });

  it("presigned URLs: served while valid; tampered, zero-signed or expired ones refused", async () => {
    const url = await presignedUrl(keys.admin, { ...send, MessageBody: "presigned" }, 60);
    expect((await fetch(url)).status).toBe(200);
    const tampered = await fetch(url.replace("MessageBody=presigned", "MessageBody=tampered"));
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain("<Code>SignatureDoesNotMatch</Code>");
    const zero = await fetch(url.replace(/X-Amz-Signature=[0-9a-f]+/, `X-Amz-Signature=${"0".repeat(64)}`));
    expect(zero.status).toBe(403);
    const expired = await fetch(await presignedUrl(keys.admin, send, 60, new Date(Date.now() - 120_000)));
    expect(expired.status).toBe(400);
    expect(await expired.text()).toContain("<Code>RequestExpired</Code>");
  });
});

describe("a query string that can't be decoded", () => {
  it("is MalformedQueryString, not a signature error, whether signed in a header, presigned or unsigned", async () => {
    const body = new URLSearchParams({ Version: "2012-11-05", Action: "ListQueues" }).toString();
    const request = { method: "POST", protocol: "http:", hostname: host.split(":")[0]!, port: Number(host.split(":")[1]), path: "/", query: { QueueNamePrefix: "%ZZ" }, headers: { host, "content-type": "application/x-www-form-urlencoded" }, body };
    const signed = await signer(keys.admin).sign(request, { signingDate: new Date() });
    expect(signed.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=/);
    const presigned = (await presignedUrl(keys.admin, { Action: "ListQueues" }, 60)) + "&QueueNamePrefix=%ZZ";
    const answers = [
      await fetch(`${srv.url}/?QueueNamePrefix=%ZZ`, { method: "POST", headers: signed.headers, body }),
      await fetch(presigned),
      await fetch(`${srv.url}/?Action=ListQueues&QueueNamePrefix=%ZZ`),
    ];
    for (const res of answers) {
      const text = await res.text();
      expect(res.status, text).toBe(400);
      expect(text).toContain("<Code>MalformedQueryString</Code>");
      expect(text).toContain("The query string contains an invalid percent-encoding: QueueNamePrefix=%ZZ");
    }
  });
});

describe("SigV4 with Debian's boto3 and aws CLI", { timeout: 240_000 }, () => {
  it("boto3: right key served, wrong secret and unknown key refused, presigned URL served, tampered one refused", async () => {
    const script = fileURLToPath(new URL("./sigv4_clients.py", import.meta.url));
    const { stdout } = await run("/usr/bin/python3", [script, srv.url, keys.admin.accessKeyId, keys.admin.secretAccessKey], { timeout: 240_000 });
    expect(stdout).toContain("right key: signed by boto3");
    expect(stdout).toContain("wrong secret: SignatureDoesNotMatch 403");
    expect(stdout).toContain("unknown key: InvalidClientTokenId 403");
    expect(stdout).toContain("presigned: 200");
    expect(stdout).toContain("tampered: 403 True");
  });

  it("aws CLI: right key served, wrong secret refused with SignatureDoesNotMatch", async () => {
    const env = (secret: string): NodeJS.ProcessEnv => ({ ...process.env, AWS_ACCESS_KEY_ID: keys.admin.accessKeyId, AWS_SECRET_ACCESS_KEY: secret, AWS_DEFAULT_REGION: "us-east-1", AWS_MAX_ATTEMPTS: "1", AWS_CONFIG_FILE: "/dev/null", AWS_SHARED_CREDENTIALS_FILE: "/dev/null" });
    const args = ["--endpoint-url", srv.url, "sqs", "send-message", "--queue-url", queueUrl(), "--message-body", "from the aws CLI"];
    const ok = await run("/usr/bin/aws", args, { env: env(keys.admin.secretAccessKey), timeout: 120_000 });
    expect(ok.stdout).toContain("MessageId");
    const wrong = await run("/usr/bin/aws", args, { env: env("wrong-secret-0123456789abcdef"), timeout: 120_000 }).then(
      () => undefined,
      (e: unknown) => e as { stderr: string },
    );
    expect(wrong?.stderr).toContain("SignatureDoesNotMatch");
  });
});
