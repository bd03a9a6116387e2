/**
 * The declarative config through real processes: `sluice serve --config` (an invalid file exits 2
 * with one line naming file, line and field, having changed nothing; SIGHUP applies the file
 * again), `sluice config check`, and `sluice config export` → a new server started on the export
 * → export again, byte-identical.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CliServer, killAllChildren, runCliToExit, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

afterAll(async () => {
  await killAllChildren();
  await removeTempDirs();
});

async function writeConfig(dir: string, name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

async function queueNames(url: string): Promise<string[]> {
  const res = await fetch(`${url}/v1/queues?limit=100`);
  return ((await res.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name);
}

/** The server's JSON log lines with this message. */
function logLines(server: CliServer, msg: string): Array<Record<string, unknown>> {
  return server
    .stdout()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === msg);
}

async function stopServer(server: CliServer): Promise<void> {
  server.child.kill("SIGTERM");
  expect((await server.exited).code).toBe(0);
}

const config = `queues:
  work-dlq: {}
  work:
    receiveMessageWaitTimeSeconds: 20
    redrivePolicy: { deadLetterQueue: work-dlq, maxReceiveCount: 3 }
    jobs: { maxAttempts: 7, rateLimitPerSecond: 50 }
schedules:
  tick:
    queue: work
    everySeconds: 300
`;

// Each case starts server and CLI processes (a TypeScript load each): slow on a busy machine, not wrong.
describe("declarative config from the command line", { timeout: 180_000 }, () => {
  it("config check: exit 0 for a valid file, 2 with file, line and field for an invalid one", async () => {
    const dir = await makeTempDir();
    const good = await writeConfig(dir, "good.yaml", config);
    const ok = await runCliToExit(["config", "check", good]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(`${good}: valid (2 queue(s), 1 schedule(s), 1 account(s))\n`);
    const bad = await writeConfig(dir, "bad.toml", "[queues.work]\nreceiveMessageWaitTimeSeconds = 21\n");
    const refused = await runCliToExit(["config", "check", bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`sluice: ${bad}:2: queues.work.receiveMessageWaitTimeSeconds: receiveMessageWaitTimeSeconds must be an integer from 0 to 20, got 21.\n`);
  });

  it("serve --config: an invalid file exits 2 with one line and changes nothing", async () => {
    const dir = await makeTempDir();
    const dataDir = await makeTempDir();
    const bad = await writeConfig(dir, "bad.yaml", "queues:\n  fine: {}\n  worse:\n    jobs: { maxAttempts: 0 }\n");
    const refused = await runCliToExit(["serve", "--port", "0", "--data-dir", dataDir, "--config", bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`sluice: ${bad}:4: queues.worse.jobs.maxAttempts: maxAttempts must be an integer from 1 to 100, got 0.\n`);
    // The same data dir, started without the file: no queue was made.
    const server = await spawnCli({ dataDir });
    expect(await queueNames(server.url)).toEqual([]);
    await stopServer(server);
  });

  it("applies the file at start and again on SIGHUP; a broken file on SIGHUP changes nothing", async () => {
    const dir = await makeTempDir();
    const file = await writeConfig(dir, "sluice.yaml", config);
    // SLUICE_CONFIG names the file as --config does.
    const server = await spawnCli({ dataDir: await makeTempDir(), env: { SLUICE_CONFIG: file } });
    expect(logLines(server, "declarative config applied")).toMatchObject([{ created: 3, updated: 0, deleted: 0 }]);
    expect(await queueNames(server.url)).toEqual(["work", "work-dlq"]);

    await writeFile(file, `${config.replace("queues:\n", "queues:\n  added: {}\n")}`);
    server.child.kill("SIGHUP");
    await waitFor(() => logLines(server, "declarative config applied").length === 2, { what: "the second apply's log line" });
    expect(logLines(server, "declarative config applied")[1]).toMatchObject({ created: 1, updated: 0, deleted: 0, unchanged: 3 });
    expect(await queueNames(server.url)).toEqual(["added", "work", "work-dlq"]);

    await writeFile(file, "queues:\n  another: {}\n  work: { delaySeconds: -1 }\n");
    server.child.kill("SIGHUP");
    await waitFor(() => logLines(server, "declarative config not applied").length === 1, { what: "the failed apply's log line" });
    expect(logLines(server, "declarative config not applied")[0]!.reason).toBe(`${file}:3: queues.work.delaySeconds: delaySeconds must be an integer from 0 to 900, got -1.`);
    expect(await queueNames(server.url)).toEqual(["added", "work", "work-dlq"]);
    await stopServer(server);
  });

  it("config export → serve --config on an empty data dir → config export is byte-identical", async () => {
    const dir = await makeTempDir();
    const first = await spawnCli({ dataDir: await makeTempDir(), extraArgs: ["--config", await writeConfig(dir, "sluice.yaml", config)] });
    // And state made through the API: a job queue with its -dlq, a FIFO queue, another account's queue.
    const put = await fetch(`${first.url}/v1/queues/embed`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ leaseSeconds: 300 }) });
    expect(put.status).toBe(200);
    const fifo = await fetch(`${first.url}/v1/queues`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "jobs.fifo", attributes: { contentBasedDeduplication: true } }) });
    expect(fifo.status).toBe(201);
    const theirs = await fetch(`${first.url}/v1/queues`, { method: "POST", headers: { "content-type": "application/json", "sluice-account": "333333333333" }, body: JSON.stringify({ name: "theirs" }) });
    expect(theirs.status).toBe(201);

    const exported = await runCliToExit(["config", "export", "--url", first.url]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain('"333333333333":');
    const exportFile = await writeConfig(dir, "exported.yaml", exported.stdout);
    const second = await spawnCli({ dataDir: await makeTempDir(), extraArgs: ["--config", exportFile] });
    const again = await runCliToExit(["config", "export", "--url", second.url]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(exported.stdout);
    await Promise.all([stopServer(first), stopServer(second)]);
  });
});
