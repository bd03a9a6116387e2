/**
 * A full disk is an answer, not a crash (docs/operations.md, "A full disk"), on a real 16 MiB
 * tmpfs: writes answer 503 (SQS ServiceUnavailable, jobs API StorageFull, both with Retry-After)
 * while reads go on, /readyz and sluice_store_writable say so, one log line marks each edge, and
 * the server takes writes again by itself once space is freed. Every message acknowledged before,
 * during and after is received at the end: none lost. A start on a full disk ends in one line,
 * exit 2. Mounting needs root (or CAP_SYS_ADMIN): without it the test fails saying so.
 */
import { execFile } from "node:child_process";
import { mkdir, open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningServer, createLogger, startServer } from "../../src/server/index.js";
import { runCliToExit } from "../support/cli.js";
import { sample } from "../support/metrics-text.js";
import { sqsRequest } from "../support/sqs-json.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

const run = promisify(execFile);

class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    done();
  }
  messages(): string[] {
    return this.lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
  }
}

let mountPoint: string | undefined;
let server: RunningServer | undefined;

afterAll(async () => {
  await server?.close();
  if (mountPoint !== undefined) await run("umount", [mountPoint]).catch(() => run("umount", ["-l", mountPoint!]));
  await removeTempDirs();
});

async function mountSmallFilesystem(): Promise<string> {
  const dir = await makeTempDir("sluice-full-");
  try {
    await run("mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", dir]);
  } catch (err) {
    throw new Error(
      `This test mounts a 16 MiB tmpfs to fill it: run the tests as root, or give the runner CAP_SYS_ADMIN (docker run --cap-add SYS_ADMIN). mount said: ${(err as { stderr?: string }).stderr ?? String(err)}`,
    );
  }
  return dir;
}

/** Writes zeros to `path` until the filesystem refuses (ENOSPC). */
async function fillUp(path: string): Promise<void> {
  const handle = await open(path, "w");
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) {
      try {
        await handle.write(chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOSPC") break;
        throw err;
      }
    }
    // Then the last few bytes a whole chunk didn't fit in.
    for (;;) {
      try {
        await handle.write(Buffer.alloc(512));
      } catch {
        break;
      }
    }
  } finally {
    await handle.close();
  }
}

const retryAfterOf = async (res: Response): Promise<{ status: number; retryAfter: string | null; body: unknown }> => ({ status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() });

describe("a full disk", { timeout: 120_000 }, () => {
  it("refuses writes with 503 until space is freed, serves reads throughout, and loses no acknowledged message", async () => {
    mountPoint = await mountSmallFilesystem();
    const dataDir = join(mountPoint, "data");
    await mkdir(dataDir);
    const logs = new LogCapture();
    server = await startServer({ port: 0, dataDir, store: "sqlite", logger: createLogger({ level: "info", destination: logs }) });
    const url = server.url;
    const queueUrl = (await sqsRequest(url, "CreateQueue", { QueueName: "full" })).json.QueueUrl as string;
    const acked = new Set<string>();
    const send = async (body: string): Promise<{ status: number; json: Record<string, unknown>; headers?: Headers }> => {
      const res = await fetch(`${url}/`, { method: "POST", headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.SendMessage" }, body: JSON.stringify({ QueueUrl: queueUrl, MessageBody: body }) });
      const json = (await res.json()) as Record<string, unknown>;
      if (res.status === 200) acked.add(body);
      return { status: res.status, json, headers: res.headers };
    };

    // Before: acknowledged as usual.
    for (let i = 0; i < 50; i++) expect((await send(`before-${i}-${"x".repeat(1000)}`)).status).toBe(200);
    const filler = join(mountPoint, "filler");
    await fillUp(filler);

    // During: sends may succeed while the WAL still has room (counted), then are refused — never a 500.
    let refused: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 20_000 && refused === undefined; i++) {
      const r = await send(`during-${i}-${"x".repeat(1000)}`);
      if (r.status !== 200) refused = r;
    }
    expect(refused, "a send refused once the disk filled").toBeDefined();
    expect({ status: refused!.status, retryAfter: refused!.headers!.get("retry-after"), json: refused!.json }).toEqual({
      status: 503,
      retryAfter: "1",
      json: { __type: "com.amazonaws.sqs#ServiceUnavailable", message: "The server's disk is full: the request was not carried out. Retry it later." },
    });
    for (let i = 0; i < 3; i++) expect((await send(`refused-${i}`)).status).toBe(503);
    const job = await fetch(`${url}/v1/queues/full-jobs/jobs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input: 1 }) });
    expect(await retryAfterOf(job)).toEqual({ status: 503, retryAfter: "1", body: { error: { code: "StorageFull", message: "The server's disk is full: the request was not carried out. Retry it later." } } });
    // Not ready, and says why; reads go on.
    const ready = await fetch(`${url}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 503, body: { status: "storage-full" } });
    expect(sample(await (await fetch(`${url}/metrics`)).text(), "sluice_store_writable")).toBe(0);
    const attributes = await sqsRequest(url, "GetQueueAttributes", { QueueUrl: queueUrl, AttributeNames: ["ApproximateNumberOfMessages"] });
    expect(attributes.status).toBe(200);
    expect(Number((attributes.json.Attributes as Record<string, string>).ApproximateNumberOfMessages)).toBe(acked.size);
    expect((await sqsRequest(url, "ListQueues", {})).status).toBe(200);
    const notFull = logs.messages().filter((m) => m.startsWith("store "));
    expect(notFull).toEqual(["store not writable: the disk is full; writes answer 503 StorageFull and /readyz 503 until space is freed"]);
    expect(logs.messages().filter((m) => m === "unexpected error" || m === "request failed")).toEqual([]);

    // Space comes back: the server notices by itself, and takes writes again.
    await unlink(filler);
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, { what: "/readyz to answer 200 again", timeoutMs: 20_000 });
    expect(sample(await (await fetch(`${url}/metrics`)).text(), "sluice_store_writable")).toBe(1);
    for (let i = 0; i < 50; i++) expect((await send(`after-${i}-${"x".repeat(1000)}`)).status).toBe(200);
    expect(logs.messages().filter((m) => m.startsWith("store "))).toEqual([
      "store not writable: the disk is full; writes answer 503 StorageFull and /readyz 503 until space is freed",
      "store writable again: space was freed; writes are served and /readyz answers 200",
    ]);

    // None lost: every acknowledged message is received, once.
    const received: string[] = [];
    for (;;) {
      const r = await sqsRequest(url, "ReceiveMessage", { QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 600 });
      const messages = (r.json.Messages as Array<{ Body: string }> | undefined) ?? [];
      if (messages.length === 0) break;
      received.push(...messages.map((m) => m.Body));
    }
    const counts = { before: 0, during: 0, after: 0 };
    for (const body of acked) counts[body.split("-")[0] as keyof typeof counts]++;
    expect(counts.before).toBe(50);
    expect(counts.after).toBe(50);
    expect(received.length).toBe(acked.size);
    expect(new Set(received)).toEqual(acked);

    // A start on a full disk: one line, exit 2.
    await server.close();
    server = undefined;
    await fillUp(filler);
    const start = await runCliToExit(["serve", "--port", "0", "--data-dir", dataDir, "--store", "sqlite"], 60_000);
    expect(start.code, start.stderr).toBe(2);
    expect(start.stderr.trim().split("\n")).toHaveLength(1);
    expect(start.stderr).toMatch(/^sluice: .*(no space left on the device|disk is full)/);
  });
});
