/**
 * Shutdown as docs/operations.md describes it, on a real `sluice serve` and a real SIGTERM: for
 * the drain period /readyz answers 503 while every request is still served; then new requests get
 * 503 + Retry-After (on a new connection too: the server still listens) until those in flight are
 * answered, long polls end early and empty, and the process exits 0.
 */
import { type Socket, connect } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { sqsOk, sqsRequest } from "../support/sqs-json.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor, within } from "../support/wait.js";

afterAll(async () => {
  await killAllChildren();
  await removeTempDirs();
});

async function readyz(url: string): Promise<{ status: number; body: { status: string } }> {
  const res = await fetch(`${url}/readyz`, { headers: { connection: "close" } });
  return { status: res.status, body: (await res.json()) as { status: string } };
}

/** A request sent but for the last byte of its body: in flight until `finish()`. */
async function heldRequest(port: number, body: string): Promise<{ finish(): Promise<string> }> {
  const socket: Socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  let received = "";
  socket.setEncoding("latin1").on("data", (d: string) => (received += d));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  socket.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.SendMessage\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, -1)}`);
  return {
    async finish() {
      socket.write(body.slice(-1));
      await within(10_000, closed, "the held request's answer");
      return received;
    },
  };
}

describe("SIGTERM: drain, then refuse, then exit", { timeout: 60_000 }, () => {
  it("serves through the drain with /readyz 503, then answers new requests 503 + Retry-After until those in flight finish", async () => {
    const srv = await spawnCli({ dataDir: await makeTempDir("sluice-drain-"), env: { SLUICE_SHUTDOWN_DRAIN_SECONDS: "5" } });
    const queueUrl = (await sqsOk(srv.url, "CreateQueue", { QueueName: "drain" })).QueueUrl as string;
    expect(await readyz(srv.url)).toEqual({ status: 200, body: { status: "ready" } });
    const earlyPoll = sqsRequest(srv.url, "ReceiveMessage", { QueueUrl: queueUrl, WaitTimeSeconds: 20 });

    srv.child.kill("SIGTERM");
    // Draining: not ready, and still serving — a send, and the long poll that takes it.
    const notReady = await waitFor(async () => {
      const r = await readyz(srv.url);
      return r.status === 503 ? r.body : undefined;
    }, { what: "/readyz to answer 503" });
    expect(notReady).toEqual({ status: "draining" });
    const sent = await sqsRequest(srv.url, "SendMessage", { QueueUrl: queueUrl, MessageBody: "sent while draining" });
    expect(sent.status).toBe(200);
    const early = await earlyPoll;
    expect(early.status).toBe(200);
    expect((early.json.Messages as Array<{ Body: string }>).map((m) => m.Body)).toEqual(["sent while draining"]);
    const latePoll = sqsRequest(srv.url, "ReceiveMessage", { QueueUrl: queueUrl, WaitTimeSeconds: 20 });
    const held = await heldRequest(srv.port, JSON.stringify({ QueueUrl: queueUrl, MessageBody: "held" }));

    // The drain is over: refused, with a code and Retry-After, on a new connection too.
    await waitFor(async () => (await readyz(srv.url)).body.status === "shutting-down", { what: "/readyz to say shutting-down", timeoutMs: 20_000 });
    const refused = await fetch(`${srv.url}/`, {
      method: "POST",
      headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.SendMessage" },
      body: JSON.stringify({ QueueUrl: queueUrl, MessageBody: "too late" }),
    });
    expect({ status: refused.status, retryAfter: refused.headers.get("retry-after"), connection: refused.headers.get("connection") }).toEqual({ status: 503, retryAfter: "1", connection: "close" });
    expect(((await refused.json()) as { __type: string }).__type).toBe("com.amazonaws.sqs#ServiceUnavailable");
    // The long poll that waited through the drain is answered, empty, while the server still runs.
    const late = await within(15_000, latePoll, "the long poll's early answer");
    expect(late).toMatchObject({ status: 200 });
    expect(late.json.Messages).toBeUndefined();
    expect(srv.child.exitCode).toBeNull();

    // The last request in flight gets its 503, and the server exits.
    expect(await held.finish()).toMatch(/^HTTP\/1\.1 503 [\s\S]*ServiceUnavailable/);
    expect(await within(15_000, srv.exited, "the server's exit")).toEqual({ code: 0, signal: null });
    const lines = srv.stdout().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { msg: string; drainSeconds?: number });
    expect(lines.filter((l) => l.msg.startsWith("shutting down") || l.msg.startsWith("shut down")).map((l) => l.msg)).toEqual([
      "shutting down: draining (/readyz answers 503, requests are still served)",
      "shutting down: refusing new requests, answering those in flight",
      "shut down: requests answered, store closed",
    ]);
  });
});
