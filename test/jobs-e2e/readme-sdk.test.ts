/**
 * README.md's jobs SDK snippet, run as written (only the URL swapped) against a fresh server: it
 * must finish on its own and print what its `console.log` comment says.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { expectedOutputPattern, oneLine, runSdkSnippet } from "./snippets.js";

afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

describe("README.md SDK snippet", () => {
  it("runs as written: the worker it starts finishes the jobs it waits for, and it prints what its comment says", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const snippets = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((block) => block.includes("@sluice/client"));
    expect(snippets).toHaveLength(1);
    const snippet = snippets[0]!;
    const server = await startTestServer();
    const run = await runSdkSnippet(snippet, "http://127.0.0.1:9324", server.url);
    expect(run.code, run.stderr).toBe(0);
    expect(oneLine(run.stdout)).toMatch(expectedOutputPattern(snippet));
  }, 60_000);
});

describe("README.md quick starts", () => {
  it("the JavaScript SQS quick start runs as saved to a .mjs file and prints the message it received", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((block) => block.includes("@aws-sdk/client-sqs"));
    expect(blocks).toHaveLength(1);
    const server = await startTestServer();
    expect(blocks[0]).toContain('"http://127.0.0.1:9324"');
    // Under the repo root, so `@aws-sdk/client-sqs` resolves as it would in the reader's project.
    const dir = join(repoRoot, ".tmp");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `quickstart-${process.pid}.mjs`);
    writeFileSync(file, blocks[0]!.replaceAll('"http://127.0.0.1:9324"', JSON.stringify(server.url)));
    try {
      // Asynchronously: the test server runs in this process and must keep answering.
      const run = await promisify(execFile)(process.execPath, [file], { encoding: "utf8", timeout: 40_000, env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" } });
      expect(oneLine(run.stdout)).toMatch(expectedOutputPattern(blocks[0]!));
    } finally {
      rmSync(file, { force: true });
    }
  }, 60_000);

  it("the SQS quick start and the jobs examples use different queues, so a reader running them in order gets no leftover messages as jobs", () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const sqsPart = readme.slice(readme.indexOf("## Use it from an SQS client"), readme.indexOf("## Run async inference jobs"));
    const jobsPart = readme.slice(readme.indexOf("## Run async inference jobs"));
    const names = (text: string, patterns: RegExp[]): Set<string> => new Set(patterns.flatMap((p) => [...text.matchAll(p)].map((m) => m[1]!)));
    const sqsQueues = names(sqsPart, [/QueueName[=:]\s*"([\w-]+)"/g, /--queue-name ([\w-]+)/g, /\/000000000000\/([\w-]+)/g]);
    const jobQueues = names(jobsPart, [/\.queue\("([\w-]+)"\)/g, /\/v1\/queues\/([\w-]+)/g, /--queue ([\w-]+)/g, /jobs submit ([\w-]+)/g]);
    expect(sqsQueues.size).toBeGreaterThanOrEqual(2);
    expect(jobQueues).toContain("embed");
    expect([...sqsQueues].filter((q) => jobQueues.has(q))).toEqual([]);
  });
});
