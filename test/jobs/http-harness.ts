/** A real Sluice server (listening on 127.0.0.1) on a manual clock, and a small JSON client for the jobs API. */
import { ManualClock } from "../../src/core/clock.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { testStoreConfig } from "../support/test-store.js";
import { makeTempDir, removeTempDir } from "../support/tmp.js";
import { openApiProblem } from "./openapi-answers.js";

export const testWebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** Answers are untyped JSON: tests assert on their shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of any shape
export type Json = any;

export interface ApiAnswer<T = Json> {
  status: number;
  headers: Headers;
  body: T;
}

export interface JobsServer {
  server: RunningServer;
  url: string;
  clock: ManualClock;
  dataDir: string;
  /**
   * One request to the server. Every answer from a jobs API route is checked against the
   * server's /openapi.json: a status it does not list for the route, or a JSON body its schema
   * refuses, throws (and fails the test).
   */
  api<T = Json>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer<T>>;
  stop(opts?: { keepDataDir?: boolean }): Promise<void>;
}

export async function startJobsServer(opts: { clock?: ManualClock; dataDir?: string; webhookAllowPrivate?: boolean; maxBlobBytes?: number } = {}): Promise<JobsServer> {
  // Near real time: webhook receivers check the signed timestamp against their own clock.
  const clock = opts.clock ?? new ManualClock(Date.now());
  const dataDir = opts.dataDir ?? (await makeTempDir("sluice-jobs-http-"));
  // The run's store (SQLite, or PostgreSQL in vitest's postgres project: test-store.ts).
  const server = await startServer({ ...(await testStoreConfig(dataDir)), host: "127.0.0.1", port: 0, dataDir, clock, webhookSecret: testWebhookSecret, webhookAllowPrivate: opts.webhookAllowPrivate ?? true, maxBlobBytes: opts.maxBlobBytes, logLevel: "warn" });
  let stopped = false;
  let openApi: Promise<Json> | undefined;
  return {
    server,
    url: server.url,
    clock,
    dataDir,
    async api(method, path, body, headers = {}) {
      const res = await fetch(server.url + path, {
        method,
        headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await res.text();
      const contentType = res.headers.get("content-type");
      // NDJSON (a batch submit with ?wait): its lines, parsed, in the order they came.
      const parsed = !text || !contentType?.includes("json") ? text : contentType.includes("ndjson") ? text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Json) : JSON.parse(text);
      const answer = { status: res.status, headers: res.headers, body: parsed };
      openApi ??= fetch(`${server.url}/openapi.json`).then((r) => r.json());
      const problem = openApiProblem(await openApi, { method, url: path, status: res.status, contentType, body: answer.body });
      if (problem) throw new Error(`undocumented answer: ${problem}`);
      return answer;
    },
    async stop(stopOpts = {}) {
      if (!stopped) {
        stopped = true;
        await server.close();
      }
      if (!stopOpts.keepDataDir) await removeTempDir(dataDir);
    },
  };
}

/** Reads Server-Sent Events from a streaming response, one parsed event per `next()` (`id` when the event has one). */
export async function openEventStream(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ next(): Promise<{ event: string; data: Json; id?: string } | undefined>; close(): void; status: number; contentType: string | null }> {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal, headers: { accept: "text/event-stream", ...headers } });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    async next() {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split("\n");
          const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
          const id = lines.find((l) => l.startsWith("id: "))?.slice(4);
          // As the SSE spec reads an event: every `data:` line, joined with "\n".
          const dataLines = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, ""));
          const data = dataLines.length > 0 ? dataLines.join("\n") : undefined;
          if (event === undefined || data === undefined) continue; // a comment (keepalive, connected)
          return id === undefined ? { event, data: JSON.parse(data) } : { event, data: JSON.parse(data), id };
        }
        const { done, value } = await reader.read();
        if (done) return undefined;
        buffer += decoder.decode(value, { stream: true });
      }
    },
    close: () => controller.abort(),
  };
}
