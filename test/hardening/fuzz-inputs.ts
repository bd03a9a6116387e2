/**
 * Malformed requests for the seeded fuzz test: valid requests of both SQS protocols and the jobs
 * API, then mutated — fields dropped, retyped, nested, oversized, filled with control
 * characters, lone surrogates or bytes that aren't UTF-8; headers duplicated or mangled; paths
 * with empty segments and bad escapes. The same seed gives the same requests.
 */

export { seededRandom } from "../crash/jobs-crash-kit.js";

export interface FuzzRequest {
  kind: "sqs-json" | "sqs-query" | "jobs" | "raw-path";
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
}

/** Every byte percent-escaped (encodeURIComponent throws on a lone surrogate). */
function escapeAll(text: string): string {
  return [...Buffer.from(text, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
}

const sqsActions = [
  "CreateQueue", "GetQueueUrl", "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch",
  "ChangeMessageVisibility", "ChangeMessageVisibilityBatch", "GetQueueAttributes", "SetQueueAttributes", "ListQueues",
  "PurgeQueue", "DeleteQueue", "TagQueue", "UntagQueue", "ListQueueTags", "AddPermission", "RemovePermission",
  "ListDeadLetterSourceQueues", "StartMessageMoveTask", "ListMessageMoveTasks", "CancelMessageMoveTask", "NoSuchAction", "",
];

export class Fuzzer {
  constructor(
    private readonly rnd: () => number,
    private readonly queueNames: readonly string[],
    private readonly host: string,
  ) {}

  private int(n: number): number {
    return Math.floor(this.rnd() * n);
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  private chance(p: number): boolean {
    return this.rnd() < p;
  }

  /** A string from the hostile catalog, or a plain one. */
  text(): string {
    const plain = () => Array.from({ length: 1 + this.int(12) }, () => String.fromCharCode(97 + this.int(26))).join("");
    switch (this.int(14)) {
      case 0:
        return "";
      case 1:
        return "\u0000\u0001\u001f";
      case 2:
        return "\ud800" + plain();
      case 3:
        return plain() + "\uffff\ufffe";
      case 4:
        return "__proto__";
      case 5:
        return "constructor";
      case 6:
        return "x".repeat(1 + this.int(300_000));
      case 7:
        return "   ";
      case 8:
        return "0x10";
      case 9:
        return "1e1";
      case 10:
        return "-1";
      case 11:
        return "😀".repeat(1 + this.int(50));
      default:
        return plain();
    }
  }

  /** Any JSON value, sometimes deeply nested. */
  value(depth = 0): unknown {
    switch (this.int(depth > 3 ? 5 : 8)) {
      case 0:
        return this.text();
      case 1:
        return this.pick([0, -1, 1.5, 2 ** 53, 1e308, Number.MAX_SAFE_INTEGER, 10]);
      case 2:
        return this.pick([true, false, null]);
      case 3:
        return this.queueUrl();
      case 4:
        return this.text();
      case 5:
        return Array.from({ length: this.int(12) }, () => this.value(depth + 1));
      case 6:
        return Object.fromEntries(Array.from({ length: this.int(6) }, () => [this.pick(["Id", "Key", "Value", "DataType", "StringValue", "__proto__", "constructor", this.text()]), this.value(depth + 1)]));
      default: {
        // Around the nesting limit (64): some just under, some over.
        let nested: unknown = this.text();
        for (let i = 0, n = 55 + this.int(20); i < n; i++) nested = this.chance(0.5) ? [nested] : { k: nested };
        return nested;
      }
    }
  }

  queueUrl(): string {
    const name = this.pick(this.queueNames);
    return this.pick([`http://${this.host}/000000000000/${name}`, `http://${this.host}//${name}`, name, `http://${this.host}/111111111111/${name}`, `http://${this.host}/000000000000/${name}/extra`]);
  }

  private sqsInput(action: string): Record<string, unknown> {
    const queueUrl = this.queueUrl();
    const templates: Record<string, Record<string, unknown>> = {
      CreateQueue: { QueueName: this.pick(this.queueNames), Attributes: { VisibilityTimeout: this.pick(["30", "-1", "x", "0x10"]), Policy: this.pick(["{}", "[[[[", "{\"a\":1}"]) } },
      SendMessage: { QueueUrl: queueUrl, MessageBody: this.text(), MessageAttributes: { [this.text()]: { DataType: this.pick(["String", "Number", "Binary", "Bogus"]), StringValue: this.text() } } },
      SendMessageBatch: { QueueUrl: queueUrl, Entries: Array.from({ length: this.int(13) }, () => ({ Id: this.text(), MessageBody: this.text() })) },
      ReceiveMessage: { QueueUrl: queueUrl, MaxNumberOfMessages: this.pick([1, 10, 11, -1, "5"]), WaitTimeSeconds: 0, VisibilityTimeout: this.pick([0, 30, 50_000]) },
      DeleteMessage: { QueueUrl: queueUrl, ReceiptHandle: this.text() },
      ChangeMessageVisibility: { QueueUrl: queueUrl, ReceiptHandle: this.text(), VisibilityTimeout: this.value() },
      SetQueueAttributes: this.chance(0.3) ? { QueueUrl: queueUrl } : { QueueUrl: queueUrl, Attributes: { [this.pick(["DelaySeconds", "RedrivePolicy", "Policy", "__proto__", this.text()])]: this.text() } },
      TagQueue: this.chance(0.3) ? { QueueUrl: queueUrl } : { QueueUrl: queueUrl, Tags: { [this.text()]: this.text() } },
      UntagQueue: this.chance(0.3) ? { QueueUrl: queueUrl } : { QueueUrl: queueUrl, TagKeys: [this.text()] },
      AddPermission: { QueueUrl: queueUrl, Label: this.text(), AWSAccountIds: [this.text()], Actions: [this.pick(["SendMessage", "*", this.text()])] },
      StartMessageMoveTask: { SourceArn: this.text(), MaxNumberOfMessagesPerSecond: this.value() },
    };
    const input = { ...(templates[action] ?? { QueueUrl: queueUrl }) };
    // Then mutations: a field dropped, retyped, or an unknown one added.
    const keys = Object.keys(input);
    if (keys.length > 0 && this.chance(0.3)) delete input[this.pick(keys)];
    if (keys.length > 0 && this.chance(0.3)) input[this.pick(keys)] = this.value();
    if (this.chance(0.1)) input[this.text()] = this.value();
    return input;
  }

  /** Flattens a JSON-protocol input into query parameters (roughly; mistakes are welcome here). */
  private flatten(prefix: string, value: unknown, out: Array<[string, string]>): void {
    if (Array.isArray(value)) value.forEach((v, i) => this.flatten(`${prefix}.${i + 1}`, v, out));
    else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) this.flatten(prefix ? `${prefix}.${k}` : k, v, out);
    else out.push([prefix, String(value)]);
  }

  private body(text: string): Buffer {
    const bytes = Buffer.from(text);
    if (!this.chance(0.08) || bytes.length === 0) return bytes;
    // Bytes that are not UTF-8, somewhere in the body.
    const at = this.int(bytes.length);
    return Buffer.concat([bytes.subarray(0, at), Buffer.from(this.pick([[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]])), bytes.subarray(at)]);
  }

  next(): FuzzRequest {
    const roll = this.int(10);
    if (roll < 3) {
      const action = this.pick(sqsActions);
      const text = this.chance(0.05) ? this.pick(["{", "[]", "null", "\"x\"", `${"[".repeat(5000)}${"]".repeat(5000)}`]) : JSON.stringify(this.sqsInput(action));
      const headers: Record<string, string | string[]> = { host: this.host, "content-type": this.pick(["application/x-amz-json-1.0", "application/x-amz-json-1.0", "application/json", "text/plain"]), "x-amz-target": this.chance(0.9) ? `AmazonSQS.${action}` : this.text().replace(/[^\x21-\x7e]/g, "").slice(0, 200) };
      return { kind: "sqs-json", method: "POST", path: this.pick(["/", "/", "/000000000000/" + this.pick(this.queueNames)]), headers, body: this.body(text) };
    }
    if (roll < 6) {
      const action = this.pick(sqsActions);
      const pairs: Array<[string, string]> = [["Action", action], ["Version", "2012-11-05"]];
      this.flatten("", this.sqsInput(action), pairs);
      if (this.chance(0.1)) pairs.push(["Tag[1].Key", "k"]);
      let form = new URLSearchParams(pairs).toString();
      if (this.chance(0.05)) form += this.pick(["&%zz=1", "&a=%E0%A4%A", "&&&=", "&MessageBody=%FF%FE"]);
      if (this.chance(0.4)) return { kind: "sqs-query", method: "GET", path: `${this.pick(["/", "/000000000000/" + this.pick(this.queueNames)])}?${form.slice(0, 6_000)}`, headers: { host: this.host } };
      return { kind: "sqs-query", method: "POST", path: this.pick(["/", "//" + this.pick(this.queueNames), "/000000000000/" + this.pick(this.queueNames)]), headers: { host: this.host, "content-type": "application/x-www-form-urlencoded" }, body: this.body(form) };
    }
    if (roll < 9) return this.jobsRequest();
    return {
      kind: "raw-path",
      method: this.pick(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]),
      path: this.pick(["/v1/jobs/%E0%A4%A", "//", "/a/b/c/d", "/v1/queues/%2E%2E/jobs", "/v1/queues/" + "q".repeat(500), "/metrics", "/ui", "/v1/events?queue=%00", "/openapi.json", "/healthz?x=%zz"]),
      headers: { host: this.host },
    };
  }

  private jobsRequest(): FuzzRequest {
    const queue = this.chance(0.9) ? this.pick(this.queueNames) : escapeAll(this.text().slice(0, 100)) || "x";
    const jobId = this.chance(0.5) ? "01900000-0000-7000-8000-000000000000" : escapeAll(this.text().slice(0, 200)) || "x";
    const headers: Record<string, string | string[]> = { host: this.host, "content-type": this.pick(["application/json", "application/json", "text/plain", "application/x-www-form-urlencoded"]) };
    if (this.chance(0.1)) headers["idempotency-key"] = this.chance(0.5) ? ["a", "b"] : this.text().replace(/[^\x20-\x7e]/g, "").slice(0, 300);
    const wait = this.chance(0.2) ? `?wait=${encodeURIComponent(this.pick(["0x10", "1e1", "0", "-1", "abc", "61", "0"]))}` : "";
    const routes: Array<[string, string, () => unknown]> = [
      ["POST", `/v1/queues/${queue}/jobs${wait}`, () => ({ input: this.value(), priority: this.value(), constructor: this.chance(0.1) ? {} : undefined, webhook: this.chance(0.1) ? { url: this.pick(["http://127.0.0.1/x", "ftp://x", this.text()]) } : undefined })],
      ["POST", `/v1/queues/${queue}/jobs/batch`, () => ({ jobs: Array.from({ length: this.int(4) }, () => ({ input: this.value(), idempotencyKey: this.pick(["", "   ", "k1", this.text()]) })) })],
      ["GET", `/v1/jobs/${jobId}${wait}`, () => undefined],
      ["POST", `/v1/jobs/${jobId}/cancel`, () => (this.chance(0.5) ? undefined : this.value())],
      ["GET", `/v1/queues/${queue}/jobs?limit=${encodeURIComponent(this.pick(["5", "0", "1e1", "x"]))}&status=${this.pick(["queued", "bogus"])}`, () => undefined],
      ["POST", `/v1/queues/${queue}/leases`, () => ({ max: this.value(), waitSeconds: 0, leaseSeconds: this.value() })],
      ["POST", `/v1/jobs/${jobId}/heartbeat`, () => ({ leaseId: this.text(), progress: this.value() })],
      ["POST", `/v1/jobs/${jobId}/complete`, () => ({ leaseId: this.text(), output: this.value() })],
      ["POST", `/v1/jobs/${jobId}/fail`, () => ({ leaseId: this.text(), error: this.value() })],
      ["PUT", `/v1/queues/${queue}`, () => ({ maxAttempts: this.value(), toString: this.chance(0.1) ? 1 : undefined })],
      ["GET", `/v1/queues/${queue}`, () => undefined],
    ];
    const [method, path, makeBody] = this.pick(routes);
    const body = makeBody();
    const text = this.chance(0.05) ? this.pick(["{not json", `{"input":${"[".repeat(5000)}${"]".repeat(5000)}}`, '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}']) : JSON.stringify(body);
    return { kind: "jobs", method, path, headers, ...(body === undefined ? {} : { body: this.body(text) }) };
  }
}

export interface FuzzAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** The error code an answer carries in any documented shape, or undefined. */
export function codeOf(a: FuzzAnswer): string | undefined {
  const queryError = a.headers["x-amzn-query-error"];
  if (typeof queryError === "string") {
    const type = (JSON.parse(a.body) as { __type?: string }).__type;
    return type !== undefined && /^[\w.]+;(Sender|Receiver)$/.test(queryError) ? queryError : undefined;
  }
  const xmlCode = /<ErrorResponse[^>]*>[\s\S]*<Code>([^<]+)<\/Code>/.exec(a.body)?.[1];
  if (xmlCode) return xmlCode;
  try {
    const code = (JSON.parse(a.body) as { error?: { code?: unknown; message?: unknown } }).error;
    return typeof code?.code === "string" && typeof code.message === "string" ? code.code : undefined;
  } catch {
    return undefined;
  }
}

