/**
 * examples/README.md, run as written: its shell commands and its SDK snippet (with the output its
 * comment promises) are read from the README itself, so the walkthrough and this test cannot
 * drift apart. The server and the worker run as child processes through the same CLI entry (from
 * source via tsx, where the README runs the build in dist/, on a free port and a temp data dir
 * instead of 9324 and ./data); each `curl` is replayed with fetch with curl's own semantics (a
 * `-d` without a content-type header would be sent as a form).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killAllChildren, repoRoot, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { expectedOutputPattern, oneLine, runSdkSnippet } from "./snippets.js";
import { killAllWorkers, runCli, spawnCliCommand } from "./workers.js";

afterEach(async () => {
  await killAllWorkers();
  await killAllChildren();
});
afterAll(removeTempDirs);

const readmeUrl = "http://127.0.0.1:9324";
const cliEntry = ["node", "dist/cli/main.js"];

/** Every command in the README's ```sh blocks, split into words as a POSIX shell would. */
function readmeCommands(): string[][] {
  const readme = readFileSync(join(repoRoot, "examples/README.md"), "utf8");
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.flatMap((b) => b.replace(/\\\n/g, " ").split("\n")).filter((l) => l.trim() && !l.trim().startsWith("#")).map(shellWords);
}

function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let s = "";
      for (i++; line[i] !== '"'; i++) s += line[i] === "\\" ? line[++i] : line[i];
      word = (word ?? "") + s;
    } else if (c === "\\") {
      word = (word ?? "") + line[++i];
    } else if (c === " " || c === "\t") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** Replays a curl command line with fetch, as curl would send it. */
async function curl(words: string[], baseUrl: string, id?: string): Promise<{ status: number; body: unknown }> {
  expect(words[0]).toBe("curl");
  let method: string | undefined;
  let data: string | undefined;
  let url: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w === "-s") continue;
    else if (w === "-X") method = words[++i];
    else if (w === "-H") {
      const [k, ...v] = words[++i]!.split(":");
      headers[k!.trim().toLowerCase()] = v.join(":").trim();
    } else if (w === "-d") data = words[++i];
    else if (w.startsWith("-")) throw new Error(`the README uses a curl flag this test does not know: ${w}`);
    else url = w;
  }
  if (data !== undefined) headers["content-type"] ??= "application/x-www-form-urlencoded";
  expect(url!.startsWith(readmeUrl)).toBe(true);
  let target = baseUrl + url!.slice(readmeUrl.length);
  if (id) target = target.replace("<id>", id);
  const res = await fetch(target, { method: method ?? (data !== undefined ? "POST" : "GET"), headers, body: data });
  return { status: res.status, body: await res.json() };
}

/** The README's one ```ts block: the SDK snippet. */
function readmeSdkSnippet(): string {
  const readme = readFileSync(join(repoRoot, "examples/README.md"), "utf8");
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  expect(blocks).toHaveLength(1);
  return blocks[0]!;
}

describe("examples/README.md walkthrough", () => {
  it("server, sentiment worker, curl submit, curl ?wait=, CLI and SDK → a sentiment label", async () => {
    const commands = readmeCommands();
    const find = (pred: (w: string[]) => boolean, what: string): string[] => {
      const found = commands.find(pred);
      if (!found) throw new Error(`the README has no ${what} command`);
      return found;
    };
    const startsWith = (w: string[], prefix: string[]): boolean => prefix.every((p, i) => w[i] === p);

    expect(find((w) => w[0] === "npm" && w[1] === "ci", "install")).toEqual(["npm", "ci"]);
    find((w) => w[0] === "npm" && w[1] === "start", "server");
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: { start: string } };
    // What spawnCli runs below: the built CLI's serve (Node flags such as a heap size may precede it).
    expect(pkg.scripts.start).toMatch(/^node (--[\w-]+(=\S+)? )*dist\/cli\/main\.js serve$/);

    const dataDir = await makeTempDir("sluice-walkthrough-");
    const server = await spawnCli({ dataDir });

    const workerCmd = find((w) => startsWith(w, [...cliEntry, "worker"]), "worker");
    expect(workerCmd).toEqual([...cliEntry, "worker", "examples/sentiment/worker.js", "--queue", "sentiment"]);
    const worker = spawnCliCommand([...workerCmd.slice(cliEntry.length), "--url", server.url]);

    const submitted = await curl(find((w) => w[0] === "curl" && w.includes("POST"), "curl submit"), server.url);
    expect(submitted.status).toBe(201);
    const id = (submitted.body as { job: { id: string; status: string } }).job.id;
    // "running" when the worker was waiting for a job, "queued" while it still loads its model.
    expect(["queued", "running"]).toContain((submitted.body as { job: { status: string } }).job.status);

    // ?wait=30 holds until the worker (still loading its model, maybe) has finished the job.
    const waited = await curl(find((w) => w[0] === "curl" && w.some((x) => x.includes("?wait=")), "curl wait"), server.url, id);
    expect(waited.status).toBe(200);
    const job = (waited.body as { job: { status: string; output: { score: number; label: string; entities: { text: string; type: string }[] } } }).job;
    expect(job.status).toBe("succeeded");
    expect(job.output.label).toBe("positive");
    expect(job.output.score).toBeGreaterThan(0);
    expect(job.output.entities).toEqual(expect.arrayContaining([{ text: "$499", type: "MONEY" }, { text: "March 3", type: "DATE" }]));

    // The CLI variant, against the same worker.
    const cliCmd = find((w) => startsWith(w, [...cliEntry, "jobs", "submit"]), "CLI submit");
    const cli = await runCli([...cliCmd.slice(cliEntry.length), "--url", server.url]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ status: "succeeded", output: { label: "positive" } });

    // The SDK snippet, run as written (only the URL swapped), prints what its comment says.
    const sdk = await runSdkSnippet(readmeSdkSnippet(), readmeUrl, server.url);
    expect(sdk.code, sdk.stderr).toBe(0);
    expect(oneLine(sdk.stdout)).toMatch(expectedOutputPattern(readmeSdkSnippet()));

    // Input without text fails for good: the job stays in sentiment, failed; its message is in sentiment-dlq.
    const bad = await fetch(`${server.url}/v1/queues/sentiment/jobs?wait=30`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"input":{}}' });
    const failedJob = ((await bad.json()) as { job: { id: string; status: string } }).job;
    expect(failedJob.status).toBe("failed");
    const failedList = await runCli(["jobs", "list", "sentiment", "--status", "failed", "--url", server.url]);
    expect(failedList.code, failedList.stderr).toBe(0);
    expect((JSON.parse(failedList.stdout) as { jobs: Array<{ id: string }> }).jobs.map((j) => j.id)).toEqual([failedJob.id]);
    const dlqList = await runCli(["jobs", "list", "sentiment-dlq", "--url", server.url]);
    expect((JSON.parse(dlqList.stdout) as { jobs: unknown[] }).jobs).toEqual([]);
    const dlqPeek = (await (await fetch(`${server.url}/v1/queues/sentiment-dlq/messages`)).json()) as { messages: Array<{ messageId: string }> };
    expect(dlqPeek.messages.map((m) => m.messageId)).toEqual([failedJob.id]);

    // Ctrl-C drains the worker, which exits 0; then the server, likewise.
    worker.child.kill("SIGINT");
    expect((await worker.exited).code).toBe(0);
    server.child.kill("SIGTERM");
    expect((await server.exited).code).toBe(0);
  }, 90_000);
});
