/**
 * An in-process SQS app for protocol tests: the real HTTP app (fastify `inject`, no socket) over
 * the real SQLite store in a temp dir, with a ManualClock so nothing waits on wall time.
 */
import { join } from "node:path";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { ManualClock } from "../../src/core/clock.js";
import { QueueService } from "../../src/core/queue-service.js";
import { buildApp } from "../../src/server/app.js";
import { cryptoIdSource } from "../../src/server/ids.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { makeTempDir, removeTempDir } from "../support/tmp.js";

export const accountId = "000000000000";
export const region = "us-east-1";
export const host = "sqs.test:9324";
export const queueUrlPrefix = `http://${host}/${accountId}/`;

export interface SqsHarness {
  app: FastifyInstance;
  queues: QueueService;
  clock: ManualClock;
  shutdown: AbortController;
  /** Errors the app reported as unexpected (a passing test leaves this empty). */
  unexpected: unknown[];
  json(action: string, body?: unknown): Promise<LightMyRequestResponse>;
  /** A form-encoded query request (POST body by default). */
  query(params: Record<string, string>, opts?: { method?: "GET" | "POST"; url?: string }): Promise<LightMyRequestResponse>;
  createQueue(name: string, attributes?: Record<string, string>): Promise<string>;
  close(): Promise<void>;
}

export async function openHarness(): Promise<SqsHarness> {
  const dir = await makeTempDir("sluice-protocols-");
  const store = openSqliteStore({ filename: join(dir, "sluice.db") });
  const clock = new ManualClock();
  const queues = new QueueService({ store, clock, ids: cryptoIdSource(), senderId: accountId });
  const shutdown = new AbortController();
  const unexpected: unknown[] = [];
  const app = buildApp({ queues, accountId, region, shutdownSignal: shutdown.signal, onUnexpectedError: (err) => unexpected.push(err) });
  await app.ready();

  const harness: SqsHarness = {
    app,
    queues,
    clock,
    shutdown,
    unexpected,
    json: (action, body = {}) =>
      app.inject({
        method: "POST",
        url: "/",
        headers: { host, "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}` },
        payload: typeof body === "string" ? body : JSON.stringify(body),
      }),
    query(params, opts = {}) {
      const form = new URLSearchParams({ Version: "2012-11-05", ...params }).toString();
      const method = opts.method ?? "POST";
      const url = opts.url ?? "/";
      if (method === "GET") return app.inject({ method, url: `${url}?${form}`, headers: { host } });
      return app.inject({ method, url, headers: { host, "content-type": "application/x-www-form-urlencoded" }, payload: form });
    },
    async createQueue(name, attributes) {
      const res = await harness.json("CreateQueue", { QueueName: name, Attributes: attributes });
      if (res.statusCode !== 200) throw new Error(`CreateQueue ${name} failed: ${res.body}`);
      return (res.json() as { QueueUrl: string }).QueueUrl;
    },
    async close() {
      shutdown.abort();
      queues.waiters.closeAll();
      await app.close();
      await store.close();
      await removeTempDir(dir);
    },
  };
  return harness;
}

/** The text of the first `<name>` element (XML-unescaped), or undefined. */
export function xmlText(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return m ? unescapeXml(m[1]!) : undefined;
}

export function xmlTexts(xml: string, name: string): string[] {
  return [...xml.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, "g"))].map((m) => unescapeXml(m[1]!));
}

export function unescapeXml(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos|#xD|#x[0-9A-Fa-f]+|#\d+);/g, (_, e: string) => {
    switch (e) {
      case "lt":
        return "<";
      case "gt":
        return ">";
      case "amp":
        return "&";
      case "quot":
        return '"';
      case "apos":
        return "'";
      default:
        return String.fromCodePoint(e.startsWith("#x") ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
    }
  });
}

/**
 * Lets pending I/O (group commit, store replies) run until `until()` holds. Not a sleep: it
 * yields to the event loop and fails loudly if the condition never comes.
 */
export async function settle(until: () => boolean, what = "condition", timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!until()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}
