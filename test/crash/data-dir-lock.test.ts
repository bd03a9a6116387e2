/**
 * One server per SQLite data dir: a second `sluice serve` on a dir in use refuses to start with a
 * one-line reason and changes nothing, and the lock goes with its holder — at close(), or by the
 * operating system when the holder is SIGKILLed.
 */
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type RunningServer, StoreOpenError, startServer } from "../../src/server/index.js";
import { killAllChildren, runCliToExit, spawnCli } from "../support/cli.js";
import { sqsV3 } from "../support/clients.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const clients: SQSClient[] = [];
const servers: RunningServer[] = [];
afterEach(async () => {
  await killAllChildren();
  for (const c of clients.splice(0)) c.destroy();
  for (const s of servers.splice(0)) await s.close();
});
afterAll(removeTempDirs);

function client(url: string): SQSClient {
  const c = sqsV3(url);
  clients.push(c);
  return c;
}

function expectRefusal(result: { code: number | null; stdout: string; stderr: string }, dir: string, pid: number): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stdout).toBe("");
  const lines = result.stderr.trim().split("\n");
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toBe(
    `sluice: --data-dir ${dir} is in use by another Sluice server (pid ${pid}): one server per SQLite data dir. ` +
      "Stop that server first, or give this one another --data-dir (several servers share one database only with --store postgres).",
  );
}

describe("one server per SQLite data dir", { timeout: 120_000 }, () => {
  it("a second serve on the dir refuses in one line; once the first is SIGKILLed, the next one starts and has its data", async () => {
    const dir = await makeTempDir("sluice-lock-");
    const first = await spawnCli({ dataDir: dir });
    const sqs = client(first.url);
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "kept" }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "sent before the kill" }));

    expectRefusal(await runCliToExit(["serve", "--port", "0", "--data-dir", dir]), dir, first.pid);
    // The refused start left the first server alone.
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);

    first.child.kill("SIGKILL");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    const next = await spawnCli({ dataDir: dir });
    const nextSqs = client(next.url);
    const { QueueUrl: nextUrl } = await nextSqs.send(new CreateQueueCommand({ QueueName: "kept" }));
    const received = await nextSqs.send(new ReceiveMessageCommand({ QueueUrl: nextUrl, WaitTimeSeconds: 1 }));
    expect(received.Messages?.map((m) => m.Body)).toEqual(["sent before the kill"]);
  });

  it("in one process too: refused tries don't loosen the holder's lock, and close() hands the dir on", async () => {
    const dir = await makeTempDir("sluice-lock-");
    const options = { host: "127.0.0.1", port: 0, dataDir: dir, logLevel: "silent" as const };
    const holder = await startServer(options);
    servers.push(holder);
    for (let i = 0; i < 2; i++) {
      const refused = await startServer(options).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(StoreOpenError);
      expect((refused as Error).message).toContain(`is in use by another Sluice server (pid ${process.pid})`);
    }
    // A refused try closed its own handle on the lock file: another process is still refused.
    expectRefusal(await runCliToExit(["serve", "--port", "0", "--data-dir", dir]), dir, process.pid);

    await servers.pop()!.close();
    const after = await startServer(options);
    servers.push(after);
    expect((await fetch(`${after.url}/healthz`)).status).toBe(200);
  });
});
