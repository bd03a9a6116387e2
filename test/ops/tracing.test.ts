/**
 * OpenTelemetry end to end: a client span's traceparent sent with a jobs submit reaches the worker
 * with the lease, the TypeScript SDK runs the handler in that trace's child span, and the server
 * exports its request spans over OTLP/HTTP to a receiver this test runs — one trace from the
 * submit through the server to the worker.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as otel from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sluice } from "../../client/src/index.js";
import { startServer, type RunningServer } from "../../src/server/index.js";
import { testStoreConfig } from "../support/test-store.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { within } from "../support/wait.js";

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}

let receiver: Server;
const received: ExportedSpan[] = [];
let server: RunningServer;
const workerSpans = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(workerSpans)] });

beforeAll(async () => {
  // An OTLP/HTTP traces receiver (JSON, as the server's exporter sends it).
  receiver = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      const doc = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: ExportedSpan[] }> }> };
      for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) received.push(...ss.spans);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const dataDir = await makeTempDir("sluice-tracing-");
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
  server = await startServer({ logLevel: "warn", ...(await testStoreConfig(dataDir)), host: "127.0.0.1", port: 0, dataDir, otlpTracesEndpoint: endpoint });
  otel.trace.setGlobalTracerProvider(provider);
});

afterAll(async () => {
  await server.close();
  receiver.close();
  otel.trace.disable();
  await removeTempDirs();
});

const hex = (bytes: number): string => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

async function submit(queue: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${server.url}/v1/queues/${queue}/jobs`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ input: "hi" }) });
}

describe("tracing", () => {
  it("one trace runs from the client's submit through the server's spans to the worker's handler span", async () => {
    const traceId = hex(16);
    const clientSpanId = hex(8);
    const traceparent = `00-${traceId}-${clientSpanId}-01`;
    const res = await submit("traced", { traceparent, tracestate: "vendor=abc" });
    expect(res.status).toBe(201);
    const { job } = (await res.json()) as { job: { id: string } };

    const sluice = new Sluice({ url: server.url });
    let leasedTrace: unknown;
    const worker = sluice.queue("traced").work(
      async (leased) => {
        leasedTrace = leased.trace;
        return "done";
      },
      { opentelemetry: otel },
    );
    expect((await sluice.jobs.wait(job.id, { timeoutMs: 10_000 })).status).toBe("succeeded");
    await within(10_000, worker.close(), "worker close");
    expect(leasedTrace).toEqual({ traceparent, tracestate: "vendor=abc" });

    const [handlerSpan] = workerSpans.getFinishedSpans();
    expect(handlerSpan?.name).toBe("traced process");
    expect(handlerSpan?.spanContext().traceId).toBe(traceId);
    expect(handlerSpan?.parentSpanContext?.spanId).toBe(clientSpanId);

    // The server's spans are sent by its batch processor; closing the server flushes them.
    await server.close();
    const submitSpan = received.find((s) => s.name === "POST /v1/queues/:queue/jobs");
    expect(submitSpan).toMatchObject({ traceId, parentSpanId: clientSpanId });
    expect(submitSpan!.attributes).toContainEqual({ key: "sluice.queue", value: { stringValue: "traced" } });
    // Requests that came without a trace context are spans of traces of their own.
    expect(received.some((s) => s.name.startsWith("POST /v1/queues/:queue/leases") && s.traceId !== traceId)).toBe(true);
  });
});

describe("trace context on submit", () => {
  let plain: RunningServer;
  beforeAll(async () => {
    const dataDir = await makeTempDir("sluice-tracing-plain-");
    plain = await startServer({ logLevel: "warn", ...(await testStoreConfig(dataDir)), host: "127.0.0.1", port: 0, dataDir });
  });
  afterAll(async () => {
    await plain.close();
  });

  it("a malformed traceparent is refused, creating nothing; without one a leased job has no trace", async () => {
    for (const bad of ["00-abc", `00-${"0".repeat(32)}-${hex(8)}-01`, `ff-${hex(16)}-${hex(8)}-01`]) {
      const res = await fetch(`${plain.url}/v1/queues/t/jobs`, { method: "POST", headers: { "content-type": "application/json", traceparent: bad }, body: JSON.stringify({ input: 1 }) });
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "ValidationFailed", message: expect.stringMatching(/traceparent/) });
    }
    await fetch(`${plain.url}/v1/queues/t/jobs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input: 2 }) });
    const lease = await fetch(`${plain.url}/v1/queues/t/leases`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const { jobs } = (await lease.json()) as { jobs: Array<{ input: number; trace?: unknown }> };
    expect(jobs.map((j) => j.input)).toEqual([2]);
    expect(jobs[0]).not.toHaveProperty("trace");
  });
});
