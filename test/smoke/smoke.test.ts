/**
 * Smoke tests with the stock Debian clients, as users run them: Debian's python3-boto3
 * (boto3_smoke.py) and awscli (awscli_smoke.sh), both speaking the query protocol, against an
 * in-process server on the system clock (external processes can't move a ManualClock).
 * They never skip: if the packages are missing the test fails and says how to install them.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";

const run = promisify(execFile);
const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
const install = "install with: apt-get install -y python3-boto3 awscli";
// Debian's interpreter and CLI, not whatever a version manager puts first on PATH.
const python = "/usr/bin/python3";
const awsCli = "/usr/bin/aws";

async function requireDebianClients(): Promise<void> {
  const missing: string[] = [];
  try {
    await run(python, ["-c", "import boto3"]);
  } catch {
    missing.push("python3-boto3");
  }
  if (!existsSync(awsCli)) missing.push("awscli");
  if (missing.length > 0) throw new Error(`missing Debian package(s) ${missing.join(", ")}: ${install}`);
}

/** Runs a smoke script; on failure the error carries its whole output. */
async function smoke(file: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(file, args, { timeout: 300_000, maxBuffer: 10 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${file} failed: ${e.message}\n--- stdout ---\n${e.stdout ?? ""}\n--- stderr ---\n${e.stderr ?? ""}`);
  }
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

describe("smoke tests with Debian's boto3 and awscli", () => {
  it("has the Debian clients installed", async () => {
    await requireDebianClients();
  });

  it("boto3: FIFO, DLQ, move task, permissions", async () => {
    await requireDebianClients();
    const out = await smoke(python, [here("./boto3_smoke.py"), server.url]);
    expect(out).toContain("boto3 smoke: all passed");
  }, 300_000);

  it("boto3: the query protocol's error wordings (missing queue, FIFO group, tags)", async () => {
    await requireDebianClients();
    const out = await smoke(python, [here("./boto3_wording.py"), server.url]);
    expect(out).toContain("boto3 wording: all passed");
  }, 120_000);

  it("aws sqs: FIFO, DLQ, move task", async () => {
    await requireDebianClients();
    const out = await smoke("bash", [here("./awscli_smoke.sh"), server.url]);
    expect(out).toContain("awscli smoke: all passed");
  }, 300_000);
});
