/**
 * A lean SQS JSON 1.0 client on an undici keep-alive pool, for load generation only.
 * Not the AWS SDK: SDK v3 spends about 2 ms of client CPU per call (middleware stack, signing,
 * MD5 checks), which on a 2-core box would throttle the load generator and steal CPU from the
 * server under test — the bench would measure the client. Correctness against real SDKs is the
 * sqs-compat tests' job, not this one's.
 */
import { Pool } from "undici";

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

  constructor(baseUrl: string, connections: number) {
    const origin = new URL(baseUrl).origin;
    // keepAliveTimeout well above the longest long poll, so connections are reused, never re-dialed.
    this.pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 120_000 });
  }

  async call<T>(action: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.pool.request({
      path: "/",
      method: "POST",
      headers: {
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": `AmazonSQS.${action}`,
      },
      body: JSON.stringify(body),
      signal,
    });
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
