/**
 * A lean SQS JSON 1.0 client on an undici keep-alive pool, for load generation only.
 * Not the AWS SDK: SDK v3 spends about 2 ms of client CPU per call (middleware stack, signing,
 * MD5 checks), which on a 2-core box would throttle the load generator and steal CPU from the
 * server under test — the bench would measure the client. Correctness against real SDKs is the
 * sqs-compat tests' job, not this one's.
 */
import { SignatureV4 } from "@smithy/signature-v4";
import { Pool } from "undici";
import { NodeSha256 } from "../src/protocols/auth/sha256.js";

/**
 * SLUICE_BENCH_SIGV4=1: the server runs with this access key (bench/peers/sluice-server.ts) and
 * every request is SigV4-signed, so the same row measures what verification costs the server.
 */
export const benchSigV4 = process.env.SLUICE_BENCH_SIGV4 === "1";
export const benchAccessKey = { accessKeyId: "AKIDBENCH", secretAccessKey: "bench-secret-0123456789abcdef" };

export interface SqsMessage {
  MessageId: string;
  ReceiptHandle: string;
  Body: string;
  Attributes?: Record<string, string>;
}

interface BatchResult {
  Successful?: Array<{ Id: string }>;
  Failed?: Array<{ Id: string; Code?: string; Message?: string }>;
}

export class SqsError extends Error {
  constructor(
    readonly action: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${action} failed: HTTP ${status} ${body.slice(0, 300)}`);
  }
}

export class LeanSqsClient {
  private readonly pool: Pool;
  private readonly host: string;
  private readonly signer = benchSigV4 ? new SignatureV4({ credentials: benchAccessKey, region: "us-east-1", service: "sqs", sha256: NodeSha256 }) : undefined;

  constructor(baseUrl: string, connections: number) {
    const origin = new URL(baseUrl).origin;
    this.host = new URL(baseUrl).host;
    // keepAliveTimeout well above the longest long poll, so connections are reused, never re-dialed.
    this.pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 120_000 });
  }

  async call<T>(action: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const payload = JSON.stringify(body);
    let headers: Record<string, string> = { "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}` };
    if (this.signer) {
      const signed = await this.signer.sign({ method: "POST", protocol: "http:", hostname: this.host, path: "/", headers: { ...headers, host: this.host }, body: payload });
      headers = signed.headers;
    }
    const res = await this.pool.request({ path: "/", method: "POST", headers, body: payload, signal });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new SqsError(action, res.statusCode, text);
    return (text === "" ? {} : JSON.parse(text)) as T;
  }

  async createQueue(name: string, attributes?: Record<string, string>): Promise<string> {
    const out = await this.call<{ QueueUrl: string }>("CreateQueue", attributes === undefined ? { QueueName: name } : { QueueName: name, Attributes: attributes });
    return out.QueueUrl;
  }

  /** `fields[i]`, when given, adds to entry i (e.g. MessageGroupId and MessageDeduplicationId on a FIFO queue). */
  async sendBatch(queueUrl: string, bodies: readonly string[], fields?: ReadonlyArray<Record<string, string>>): Promise<void> {
    const out = await this.call<BatchResult>("SendMessageBatch", {
      QueueUrl: queueUrl,
      Entries: bodies.map((MessageBody, i) => ({ ...fields?.[i], Id: String(i), MessageBody })),
    });
    assertAllSucceeded("SendMessageBatch", out, bodies.length);
  }

  async receive(queueUrl: string, max: number, waitSeconds: number, signal?: AbortSignal): Promise<SqsMessage[]> {
    const out = await this.call<{ Messages?: SqsMessage[] }>(
      "ReceiveMessage",
      { QueueUrl: queueUrl, MaxNumberOfMessages: max, WaitTimeSeconds: waitSeconds, MessageSystemAttributeNames: ["SentTimestamp"] },
      signal,
    );
    return out.Messages ?? [];
  }

  async deleteBatch(queueUrl: string, receiptHandles: readonly string[]): Promise<void> {
    const out = await this.call<BatchResult>("DeleteMessageBatch", {
      QueueUrl: queueUrl,
      Entries: receiptHandles.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle })),
    });
    assertAllSucceeded("DeleteMessageBatch", out, receiptHandles.length);
  }

  async close(): Promise<void> {
    // destroy(), not close(): close() would wait for the consumers' parked long polls to return.
    await this.pool.destroy();
  }
}

function assertAllSucceeded(action: string, out: BatchResult, expected: number): void {
  const failed = out.Failed ?? [];
  if (failed.length > 0) throw new Error(`${action}: ${failed.length} entries failed, first: ${JSON.stringify(failed[0])}`);
  const ok = out.Successful?.length ?? 0;
  if (ok !== expected) throw new Error(`${action}: ${ok} of ${expected} entries reported successful`);
}
