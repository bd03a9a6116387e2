/**
 * Online backup: `sluice backup <file>` against a server under load gives a consistent copy; a
 * second server started on the copy has every message acknowledged before the backup began.
 * The route needs the admin scope, and a store without an online backup says so.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger, startServer, type RunningServer } from "../../src/server/index.js";
import { killAllChildren, repoRoot, spawnCli } from "../support/cli.js";
import { createDatabase } from "../support/postgres.js";
import { sqsOk } from "../support/sqs-json.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const run = promisify(execFile);

const sqs = sqsOk;

/** Sends batches of 10 until stopped; every message id the server acknowledged is in `acked`. */
function sendLoad(url: string, queueUrl: string, acked: Set<string>, body: string): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    for (let batch = 0; !stopped; batch++) {
      const entries = Array.from({ length: 10 }, (_, i) => ({ Id: `e${i}`, MessageBody: `${batch}-${i}-${body}` }));
      const { Successful } = (await sqs(url, "SendMessageBatch", { QueueUrl: queueUrl, Entries: entries })) as { Successful: Array<{ MessageId: string }> };
      for (const s of Successful) acked.add(s.MessageId);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Receives and deletes until stopped: writes of another kind while the backup runs. */
function churn(url: string, queueUrl: string): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await sqs(url, "SendMessageBatch", { QueueUrl: queueUrl, Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `c${i}`, MessageBody: "churn" })) });
      const { Messages } = (await sqs(url, "ReceiveMessage", { QueueUrl: queueUrl, MaxNumberOfMessages: 10 })) as { Messages?: Array<{ ReceiptHandle: string }> };
      if (Messages?.length) await sqs(url, "DeleteMessageBatch", { QueueUrl: queueUrl, Entries: Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })) });
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}

describe("online backup", () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await killAllChildren();
    await removeTempDirs();
  });

  it("copies a live database under load; a server on the copy has every message acknowledged before the backup began", async () => {
    const a = await spawnCli({ dataDir: await makeTempDir("sluice-backup-a-") });
    const queueUrl = (await sqs(a.url, "CreateQueue", { QueueName: "load" })).QueueUrl as string;
    const churnUrl = (await sqs(a.url, "CreateQueue", { QueueName: "churn" })).QueueUrl as string;
    const acked = new Set<string>();
    const body = "x".repeat(4096);
    // A database of a few tens of MiB, so the backup takes many steps with writes between them.
    const prefill = sendLoad(a.url, queueUrl, acked, body);
    while (acked.size < 2500) await new Promise((r) => setTimeout(r, 50));
    const load = churn(a.url, churnUrl);

    // The route itself, asked at once: the newest acknowledged writes are still only in the WAL,
    // which a copy of the database file alone would miss.
    const ackedBefore = new Set(acked); // acknowledged before the backup began
    const file = join(await makeTempDir("sluice-backup-out-"), "copy.db");
    const res = await fetch(`${a.url}/v1/backup`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.sqlite3");
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    const sentDuring = acked.size - ackedBefore.size;
    await Promise.all([prefill.stop(), load.stop()]);
    expect((await stat(file)).size).toBeGreaterThan(2500 * 4096);
    // The load went on while the copy was taken.
    expect(sentDuring).toBeGreaterThan(0);

    const copy = new Database(file, { readonly: true });
    expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
    copy.close();

    const bDir = await makeTempDir("sluice-backup-b-");
    await mkdir(bDir, { recursive: true });
    await copyFile(file, join(bDir, "sluice.db"));
    const b = await spawnCli({ dataDir: bDir });
    const bQueueUrl = (await sqs(b.url, "GetQueueUrl", { QueueName: "load" })).QueueUrl as string;
    const found = new Set<string>();
    for (;;) {
      const { Messages } = (await sqs(b.url, "ReceiveMessage", { QueueUrl: bQueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 600 })) as { Messages?: Array<{ MessageId: string }> };
      if (!Messages?.length) break;
      for (const m of Messages) found.add(m.MessageId);
    }
    const missing = [...ackedBefore].filter((id) => !found.has(id));
    expect(missing).toEqual([]);
    // Nothing in the copy that the server never acknowledged or was about to.
    expect(found.size).toBeLessThanOrEqual(acked.size + 10);
  });

  it("needs the admin scope once credentials are configured", async () => {
    const dataDir = await makeTempDir("sluice-backup-");
    const credentialsFile = join(dataDir, "credentials.json");
    const admin = "backup-admin-token-0123456789abcdef";
    const reader = "backup-reader-token-0123456789abcdef";
    await writeFile(credentialsFile, JSON.stringify({ tokens: [{ name: "ops", token: admin, scopes: ["admin"] }, { name: "grafana", token: reader, scopes: ["read"] }] }));
    server = await startServer({ port: 0, dataDir, credentialsFile, logger: createLogger({ level: "silent" }) });
    const denied = await cli(["backup", join(dataDir, "copy.db"), "--url", server.url, "--token", reader]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/AccessDenied \(HTTP 403\)/);
    const file = join(dataDir, "copy.db");
    const ok = await cli(["backup", file, "--url", server.url, "--token", admin, "--json"]);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const summary = JSON.parse(ok.stdout) as { file: string; bytes: number };
    expect(summary).toMatchObject({ file, bytes: (await stat(file)).size });
    const copy = new Database(file, { readonly: true });
    expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
    copy.close();
    // Not over an existing file unless --force; nothing is left behind in the data dir.
    const again = await cli(["backup", file, "--url", server.url, "--token", admin]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists; pass --force to replace it/);
    expect((await cli(["backup", file, "--url", server.url, "--token", admin, "--force"])).code).toBe(0);
    expect((await readdir(dataDir)).filter((f) => f.startsWith(".backup-"))).toEqual([]);
  });

  it("is refused with UnsupportedOperation on the PostgreSQL store", async () => {
    const db = await createDatabase();
    try {
      server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-backup-pg-"), store: "postgres", postgresUrl: db.url, logger: createLogger({ level: "silent" }) });
      const res = await fetch(`${server.url}/v1/backup`, { method: "POST" });
      expect(res.status).toBe(501);
      expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "UnsupportedOperation", message: expect.stringContaining("pg_dump") });
      await server.close();
      server = undefined;
    } finally {
      await db.drop();
    }
  });
});
