/**
 * The admin CLI against a real server: `sluice queues list|create|delete|purge|stats|peek`,
 * `sluice send`, `sluice dlq redrive` — JSON when piped, tables and a progress bar on a terminal,
 * and the exit codes `sluice --help` documents.
 */
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, createLogger, startServer } from "../../src/server/index.js";
import { repoRoot } from "../support/cli.js";
import { sqsOk } from "../support/sqs-json.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

const run = promisify(execFile);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

let server: RunningServer;

async function sluice(args: string[], stdin?: string): Promise<CliResult> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args, "--url", server.url], { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdin.end(stdin ?? "");
  const code = await new Promise<number>((resolve) => child.once("close", (c) => resolve(c ?? -1)));
  return { code, stdout, stderr };
}

/** The same, on a pseudo-terminal (util-linux `script`): what a person at a terminal sees. */
async function sluiceOnTty(args: string[]): Promise<string> {
  const command = [process.execPath, "--import", "tsx", "src/cli/main.ts", ...args, "--url", server.url].map((a) => `'${a}'`).join(" ");
  const { stdout } = await run("script", ["-qec", command, "/dev/null"], { cwd: repoRoot, env: { ...process.env, COLUMNS: "160" } });
  // Without the terminal's colour and cursor codes.
  return stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
}

/** Admin API calls for setting up what a test is not about (each CLI run costs a process start). */
async function admin(method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${server.url}${path}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
}

function json<T>(r: CliResult): T {
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as T;
}

const sqs = (action: string, body: unknown): Promise<Record<string, unknown>> => sqsOk(server.url, action, body);

/** Receives every visible message of `queue` twice over: with maxReceiveCount 1 they end in its dead-letter queue. */
async function deadLetterAll(queue: string): Promise<void> {
  const { QueueUrl } = await sqs("GetQueueUrl", { QueueName: queue });
  await sqs("ReceiveMessage", { QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 });
  await sqs("ReceiveMessage", { QueueUrl, MaxNumberOfMessages: 10 });
}

// Each case starts CLI processes (a TypeScript load each): slow on a busy machine, not wrong.
describe("the admin CLI", { timeout: 180_000 }, () => {
  beforeAll(async () => {
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-admin-cli-"), logger: createLogger({ level: "silent" }) });
  });
  afterAll(async () => {
    await server?.close();
    await removeTempDirs();
  });

  it("creates queues, sends, lists, peeks and shows stats as JSON when piped", async () => {
    const missingDlq = await sluice(["queues", "create", "orders", "--dead-letter-queue", "orders-dlq", "--max-receive-count", "1"]);
    expect(missingDlq.code).toBe(1);
    expect(missingDlq.stderr).toMatch(/^sluice: InvalidParameterValue \(HTTP 400\): .*orders-dlq/m);
    expect(json<{ queue: { name: string } }>(await sluice(["queues", "create", "orders-dlq"])).queue.name).toBe("orders-dlq");
    const created = json<{ queue: { name: string; deadLetterQueue: string; attributes: { visibilityTimeoutSeconds: number } } }>(
      await sluice(["queues", "create", "orders", "--dead-letter-queue", "orders-dlq", "--max-receive-count", "1", "--visibility-timeout", "45"]),
    );
    expect(created.queue).toMatchObject({ name: "orders", deadLetterQueue: "orders-dlq", attributes: { visibilityTimeoutSeconds: 45 } });
    const clash = await sluice(["queues", "create", "orders", "--visibility-timeout", "10"]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(/QueueAlreadyExists \(HTTP 409\)/);

    const sent = json<{ message: { messageId: string } }>(await sluice(["send", "orders", "first order", "--attribute", "kind=test"]));
    expect(sent.message.messageId).toMatch(/^[0-9a-f-]{36}$/);
    json(await sluice(["send", "orders", "-"], "second order from stdin"));

    const listed = json<{ queues: Array<{ name: string; stats: { messages: { visible: number } } }> }>(await sluice(["queues", "list", "--prefix", "orders"]));
    expect(listed.queues.map((q) => [q.name, q.stats.messages.visible])).toEqual([
      ["orders", 2],
      ["orders-dlq", 0],
    ]);

    const peeked = json<{ messages: Array<{ body: string; receiveCount: number; messageAttributes: Record<string, { stringValue: string }> }> }>(await sluice(["queues", "peek", "orders"]));
    expect(peeked.messages.map((m) => m.body)).toEqual(["first order", "second order from stdin"]);
    expect(peeked.messages[0]!.messageAttributes.kind!.stringValue).toBe("test");
    expect(peeked.messages.every((m) => m.receiveCount === 0)).toBe(true);

    const stats = json<{ queue: { stats: { messages: { visible: number } }; autoscaling: { workersDesired: number } } }>(await sluice(["queues", "stats", "orders"]));
    expect(stats.queue.stats.messages.visible).toBe(2);
    expect(stats.queue.autoscaling.workersDesired).toBe(1);
  });

  it("redrives a dead-letter queue to the end, purges and deletes, with --yes", async () => {
    await deadLetterAll("orders");
    expect(json<{ queue: { stats: { messages: { visible: number } } } }>(await sluice(["queues", "stats", "orders-dlq"])).queue.stats.messages.visible).toBe(2);
    const redrive = json<{ task: { status: string; movedCount: number; source: string } }>(await sluice(["dlq", "redrive", "orders-dlq"]));
    expect(redrive.task).toMatchObject({ status: "COMPLETED", movedCount: 2, source: "orders-dlq" });
    expect(json<{ queue: { stats: { messages: { visible: number } } } }>(await sluice(["queues", "stats", "orders"])).queue.stats.messages.visible).toBe(2);

    const unconfirmed = await sluice(["queues", "purge", "orders"]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/Purging orders can't be undone: pass --yes/);
    expect(json<{ deleted: number }>(await sluice(["queues", "purge", "orders", "--yes"])).deleted).toBe(2);

    expect(json<{ deleted: string }>(await sluice(["queues", "delete", "orders", "--yes"])).deleted).toBe("orders");
    const gone = await sluice(["queues", "stats", "orders"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/QueueNotFound \(HTTP 404\)/);
  });

  it("exits 3 when the redrive it follows is cancelled", async () => {
    await admin("POST", "/v1/queues", { name: "slow-dlq" });
    await admin("POST", "/v1/queues", { name: "slow", attributes: { redrivePolicy: { deadLetterQueue: "slow-dlq", maxReceiveCount: 1 } } });
    for (let i = 0; i < 5; i++) await admin("POST", "/v1/queues/slow/messages", { body: `m${i}` });
    await deadLetterAll("slow");
    const following = sluice(["dlq", "redrive", "slow-dlq", "--to", "slow", "--max-per-second", "1"]);
    const handle = await waitFor(async () => {
      const { tasks } = (await (await fetch(`${server.url}/v1/queues/slow-dlq/redrive`)).json()) as { tasks: Array<{ taskHandle: string; status: string }> };
      return tasks.find((t) => t.status === "RUNNING")?.taskHandle;
    }, { what: "the redrive to start" });
    expect((await fetch(`${server.url}/v1/redrives/${handle}/cancel`, { method: "POST" })).status).toBe(200);
    const ended = await following;
    expect(ended.code).toBe(3);
    expect((JSON.parse(ended.stdout) as { task: { status: string } }).task.status).toBe("CANCELLED");
  });

  it("prints tables and a progress bar on a terminal", async () => {
    await admin("POST", "/v1/queues", { name: "tty-dlq" });
    await admin("POST", "/v1/queues", { name: "tty", attributes: { redrivePolicy: { deadLetterQueue: "tty-dlq", maxReceiveCount: 1 } } });
    await admin("POST", "/v1/queues/tty/messages", { body: "hello" });
    const table = await sluiceOnTty(["queues", "list", "--prefix", "tty"]);
    expect(table).toMatch(/│ queue\s+│ visible\s+│ in flight/);
    expect(table).toMatch(/│ tty\s+│ 1\s+│ 0\s+│/);
    expect(() => JSON.parse(table)).toThrow();
    await deadLetterAll("tty");
    const redrive = await sluiceOnTty(["dlq", "redrive", "tty-dlq"]);
    expect(redrive).toMatch(/redrive .*100% \| 1\/1 messages \| COMPLETED/);
    expect(redrive).toMatch(/│ status\s+│ COMPLETED/);
  });

  it("reports bad usage with 2 and an unreachable server with 1", async () => {
    const badLimit = await sluice(["queues", "list", "--limit", "x"]);
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toMatch(/--limit must be an integer/);
    const unreachable = await run(process.execPath, ["--import", "tsx", "src/cli/main.ts", "queues", "list", "--url", "http://127.0.0.1:9"], { cwd: repoRoot }).then(
      () => ({ code: 0, stderr: "" }),
      (e: CliResult) => e,
    );
    expect(unreachable.code).toBe(1);
    const stderr = unreachable.stderr;
    expect(stderr).toMatch(/^sluice: cannot reach the server: GET \/v1\/queues/m);
    const help = await run(process.execPath, ["--import", "tsx", "src/cli/main.ts", "--help"], { cwd: repoRoot });
    for (const command of ["queues", "send", "dlq", "backup"]) expect(help.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
  });
});
