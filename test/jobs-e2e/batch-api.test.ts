/**
 * The OpenAI-compatible Batch API (docs/jobs-api.md, "Batch API") through the official `openai`
 * npm client, unchanged but for its baseURL and a Sluice bearer token as its API key: files
 * uploaded and read back, batches created, listed, followed to completion by a worker (the TS
 * SDK) and canceled, and input files that fail validation as OpenAI's do. On the store the
 * project runs (SQLite, and PostgreSQL in the postgres project). Python's `openai` package is not
 * tested: Debian ships no package of it on these machines.
 */
import { NonRetryableError, Sluice, type Worker } from "@sluice/client";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Secret } from "../../src/protocols/auth/principal.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

const token = "batch-token-0123456789";
let server: TestServer;
let openai: OpenAI;
let sluice: Sluice;
const workers: Worker[] = [];

beforeAll(async () => {
  server = await startTestServer({ config: { apiToken: new Secret(token) } });
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: token, maxRetries: 0 });
  sluice = new Sluice({ url: server.url, token });
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await stopAllServers();
  await removeTempDirs();
});

const line = (customId: string, body: unknown, url = "/v1/chat/completions"): string => JSON.stringify({ custom_id: customId, method: "POST", url, body });
const upload = async (text: string, name = "in.jsonl") => openai.files.create({ file: await toFile(Buffer.from(text), name), purpose: "batch" });
const settled = (id: string, status: string) =>
  waitFor(
    async () => {
      const b = await openai.batches.retrieve(id);
      return b.status === status ? b : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 50, what: `batch ${id} ${status}` },
  );
const linesOf = async (fileId: string): Promise<Array<Record<string, unknown>>> =>
  (await (await openai.files.content(fileId)).text())
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("files", () => {
  it("stores an upload and answers it as OpenAI's file object, its content byte for byte, and deletes it", async () => {
    const text = `${line("a", { messages: [{ role: "user", content: "héllo" }] })}\n${line("b", { n: 2 })}\n`;
    const file = await upload(text, "requests.jsonl");
    expect(file).toMatchObject({ object: "file", bytes: Buffer.byteLength(text), filename: "requests.jsonl", purpose: "batch", status: "processed" });
    expect(file.id).toMatch(/^file-[0-9a-f]{32}$/);
    expect(await openai.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: file.bytes });
    expect(await (await openai.files.content(file.id)).text()).toBe(text);
    expect(await openai.files.delete(file.id)).toEqual({ id: file.id, object: "file", deleted: true });
    await expect(openai.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
  });

  it("keeps a file over one stored chunk whole, streamed in from a stream", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => line(`c${i}`, { text: "x".repeat(400) + i }));
    const text = `${lines.join("\n")}\n`;
    expect(Buffer.byteLength(text)).toBeGreaterThan(1_048_576);
    const { Readable } = await import("node:stream");
    const file = await openai.files.create({ file: await toFile(Readable.from([Buffer.from(text)]), "big.jsonl"), purpose: "batch" });
    expect(file.bytes).toBe(Buffer.byteLength(text));
    expect(await (await openai.files.content(file.id)).text()).toBe(text);
  });

  it("refuses a file over 50,000 lines, and a body declared over 200 MB before reading it", async () => {
    await expect(upload("{}\n".repeat(50_001))).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/over 50000 lines/) });
    const { request } = await import("node:http");
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${server.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "multipart/form-data; boundary=x", "content-length": String(210 * 1024 * 1024) } }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => {
          req.destroy(); // the rest of the declared body is never sent
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
      req.on("error", reject);
      req.write("--x\r\n");
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatch(/over 209715200 bytes/);
  });

  it("refuses another purpose, a request without a file, or another token, and keeps nothing", async () => {
    await expect(openai.files.create({ file: await toFile(Buffer.from("x\n"), "a.jsonl"), purpose: "fine-tune" })).rejects.toMatchObject({ status: 400 });
    const form = new FormData();
    form.set("purpose", "batch");
    const res = await fetch(`${server.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/no file part/);
    const stranger = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "not-the-token", maxRetries: 0 });
    await expect(stranger.files.create({ file: await toFile(Buffer.from("x\n"), "a.jsonl"), purpose: "batch" })).rejects.toMatchObject({ status: 401 });
  });
});

describe("batches", () => {
  it("turns every line into a job whose output is the line's response body, and failed jobs into the error file", async () => {
    const queue = "chat";
    workers.push(
      sluice.queue(queue).work(
        async (job) => {
          const input = job.input as { custom_id: string; body: { n: number } };
          if (input.custom_id === "bad") throw new NonRetryableError("model refused");
          return { echo: input.body.n * 2 };
        },
        { concurrency: 4 },
      ),
    );
    const lines = ["r1", "r2", "bad", "r3"].map((id, i) => line(id, { n: i }));
    const input = await upload(`${lines.join("\n")}\n`);
    const created = await openai.batches.create({ input_file_id: input.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { queue, team: "ml" } });
    expect(created).toMatchObject({ object: "batch", status: "validating", input_file_id: input.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { queue, team: "ml" } });
    expect(created.id).toMatch(/^batch_[0-9a-f]{32}$/);
    const done = await settled(created.id, "completed");
    expect(done.request_counts).toEqual({ total: 4, completed: 3, failed: 1 });
    for (const at of [done.in_progress_at, done.finalizing_at, done.completed_at]) expect(at).toBeGreaterThanOrEqual(done.created_at);
    expect(done.expires_at).toBe(done.created_at + 86_400);
    const output = await linesOf(done.output_file_id!);
    expect(output.map((l) => [l.custom_id, (l.response as { status_code: number; body: unknown }).body, l.error])).toEqual([
      ["r1", { echo: 0 }, null],
      ["r2", { echo: 2 }, null],
      ["r3", { echo: 6 }, null],
    ]);
    expect((output[0]!.response as { status_code: number }).status_code).toBe(200);
    expect(await linesOf(done.error_file_id!)).toEqual([expect.objectContaining({ custom_id: "bad", response: null, error: expect.objectContaining({ message: "model refused" }) })]);
    expect((await openai.files.retrieve(done.output_file_id!)).purpose).toBe("batch_output");
  });

  it("lists batches newest first, a page at a time", async () => {
    const input = await upload(`${line("only", {})}\n`);
    const first = await openai.batches.create({ input_file_id: input.id, endpoint: "/v1/embeddings", completion_window: "24h", metadata: { queue: "listed" } });
    const second = await openai.batches.create({ input_file_id: input.id, endpoint: "/v1/embeddings", completion_window: "24h", metadata: { queue: "listed" } });
    const page = await openai.batches.list({ limit: 1 });
    expect(page.data.map((b) => b.id)).toEqual([second.id]);
    expect(page.has_more).toBe(true);
    const next = await openai.batches.list({ limit: 1, after: second.id });
    expect(next.data.map((b) => b.id)).toEqual([first.id]);
    const seen: string[] = [];
    for await (const b of openai.batches.list({ limit: 2 })) seen.push(b.id);
    expect(seen.slice(0, 2)).toEqual([second.id, first.id]);
    await expect(openai.batches.retrieve("batch_nope")).rejects.toMatchObject({ status: 404 });
  });

  it("fails validation as OpenAI does, naming each bad line, and makes no job", async () => {
    const text = [line("ok", {}), "{not json", JSON.stringify({ method: "POST", url: "/v1/chat/completions", body: {} }), line("ok", {}), line("x", {}, "/v1/embeddings"), ""].join("\n");
    const input = await upload(text);
    const created = await openai.batches.create({ input_file_id: input.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { queue: "never" } });
    const failed = await settled(created.id, "failed");
    expect(failed.errors?.data?.map((e) => [e.line, e.code, e.param])).toEqual([
      [2, "invalid_json_line", null],
      [3, "missing_required_parameter", "custom_id"],
      [4, "duplicate_custom_id", "custom_id"],
      [5, "invalid_url", "url"],
    ]);
    expect(failed.failed_at).toBeGreaterThanOrEqual(failed.created_at);
    const jobs = await fetch(`${server.url}/v1/queues/never/jobs`, { headers: { authorization: `Bearer ${token}` } });
    expect(jobs.status === 404 || ((await jobs.json()) as { jobs: unknown[] }).jobs.length === 0).toBe(true);
  });

  it("refuses a bad request at once: an unknown file, another window, a bad queue name", async () => {
    const input = await upload(`${line("a", {})}\n`);
    await expect(openai.batches.create({ input_file_id: "file-nope", endpoint: "/v1/chat/completions", completion_window: "24h" })).rejects.toMatchObject({ status: 404 });
    await expect(openai.batches.create({ input_file_id: input.id, endpoint: "/v1/chat/completions", completion_window: "1h" as "24h" })).rejects.toMatchObject({ status: 400 });
    await expect(openai.batches.create({ input_file_id: input.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { queue: "no spaces" } })).rejects.toMatchObject({ status: 400 });
  });

  it("cancels: queued jobs are canceled, and the batch ends cancelled with them in its error file", async () => {
    const input = await upload(`${["c1", "c2", "c3"].map((id) => line(id, {})).join("\n")}\n`);
    const created = await openai.batches.create({ input_file_id: input.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { queue: "idle" } });
    const running = await waitFor(
      async () => {
        const b = await openai.batches.retrieve(created.id);
        return b.status === "in_progress" && (await jobCount("idle")) === 3 ? b : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: "the batch's jobs submitted" },
    );
    expect(running.request_counts).toEqual({ total: 3, completed: 0, failed: 0 });
    const cancelling = await openai.batches.cancel(created.id);
    expect(cancelling.status).toBe("cancelling");
    expect(cancelling.cancelling_at).not.toBeNull();
    const cancelled = await settled(created.id, "cancelled");
    expect(cancelled.request_counts).toEqual({ total: 3, completed: 0, failed: 3 });
    expect(cancelled.output_file_id).toBeNull();
    expect((await linesOf(cancelled.error_file_id!)).map((l) => [l.custom_id, (l.error as { code: string }).code])).toEqual([
      ["c1", "batch_cancelled"],
      ["c2", "batch_cancelled"],
      ["c3", "batch_cancelled"],
    ]);
    await expect(openai.batches.cancel(created.id)).resolves.toMatchObject({ status: "cancelled" });
  });
});

async function jobCount(queue: string): Promise<number> {
  const res = await fetch(`${server.url}/v1/queues/${queue}/jobs?status=queued`, { headers: { authorization: `Bearer ${token}` } });
  return res.status === 200 ? ((await res.json()) as { jobs: unknown[] }).jobs.length : 0;
}
