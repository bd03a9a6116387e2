/**
 * Slow-loris: a client that sends its request head one byte per second is cut off once the head
 * timeout passes (with a coded 408), while hundreds of concurrent long polls are held and
 * answered and health checks are answered. The server runs with a 1 s head timeout here (10 s in
 * production) so the test doesn't wait on wall time longer than it must.
 */
import { connect } from "node:net";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueueService, systemClock } from "../../src/core/index.js";
import { buildApp } from "../../src/server/app.js";
import { cryptoIdSource } from "../../src/server/ids.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const longPolls = 300;
let url: string;
let port: number;
let close: () => Promise<void>;

beforeAll(async () => {
  const dir = await makeTempDir("sluice-slow-");
  const store = openSqliteStore({ filename: join(dir, "sluice.db") });
  const queues = new QueueService({ store, clock: systemClock, ids: cryptoIdSource(), senderId: "000000000000" });
  const shutdown = new AbortController();
  const app = buildApp({ queues, accountId: "000000000000", region: "us-east-1", shutdownSignal: shutdown.signal, onUnexpectedError: (err) => console.error(err), httpTimeouts: { headersMs: 1_000, requestMs: 3_000 } });
  await app.listen({ host: "127.0.0.1", port: 0 });
  port = (app.server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}`;
  close = async () => {
    shutdown.abort();
    queues.waiters.closeAll();
    await app.close();
    await store.close();
  };
});
afterAll(async () => {
  await close();
  await removeTempDirs();
});

/** A client trickling a request head, one byte every 200 ms; resolves with what it got and when. */
function slowLoris(): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, "127.0.0.1");
    const head = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: " + "a".repeat(200);
    let i = 0;
    let answer = "";
    const timer = setInterval(() => {
      if (i < head.length && socket.writable) socket.write(head[i++]!);
    }, 200);
    socket.on("data", (d) => (answer += d.toString()));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ answer, closedAfterMs: Date.now() - started });
    });
  });
}

describe("slow clients", () => {
  it("cuts off a request head that trickles in, with a coded 408, while long polls are held and health checks are answered", async () => {
    const agent = new Agent({ connections: longPolls + 10 });
    const json = (target: string, body: unknown) =>
      request(`${url}/`, { method: "POST", dispatcher: agent, headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${target}` }, body: JSON.stringify(body) });
    const created = await json("CreateQueue", { QueueName: "held" });
    const { QueueUrl } = (await created.body.json()) as { QueueUrl: string };
    const polls = Array.from({ length: longPolls }, async () => {
      const res = await json("ReceiveMessage", { QueueUrl, WaitTimeSeconds: 4 });
      return { status: res.statusCode, body: (await res.body.json()) as { Messages?: unknown[] } };
    });
    const loris = Array.from({ length: 5 }, slowLoris);
    const health = await request(`${url}/healthz`, { dispatcher: agent });
    await health.body.text();
    expect(health.statusCode).toBe(200);

    for (const { answer, closedAfterMs } of await Promise.all(loris)) {
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      expect(answer).toContain('"code":"RequestTimeout"');
      // 1 s head timeout, checked every second: cut off within a few seconds, not left open.
      // (the head would take 46 s to trickle in whole).
      expect(closedAfterMs).toBeLessThan(20_000);
    }
    const answered = await Promise.all(polls);
    expect(answered.every((a) => a.status === 200)).toBe(true);
    await agent.close();
  });
});
