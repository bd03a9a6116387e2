/**
 * examples/streaming/README.md's TypeScript walkthrough, run as written: its commands are read
 * from the page — the server and the worker run through the same CLI entry (from source via tsx,
 * where the page runs the build in dist/, on a free port and a temp data dir), the client with
 * the SDK's source — and the client's output must be the page's. The job it ran must have
 * streamed: one stored chunk per token, sent in more than one request while it ran.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killAllChildren, repoRoot, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";
import { killAllWorkers, spawnCliCommand } from "./workers.js";

afterEach(async () => {
  await killAllWorkers();
  await killAllChildren();
});
afterAll(removeTempDirs);

const readme = readFileSync(join(repoRoot, "examples/streaming/README.md"), "utf8");
/** The page's TypeScript section. */
const typescript = readme.slice(readme.indexOf("## TypeScript"), readme.indexOf("## Python"));

function blocks(lang: string): string[] {
  return [...typescript.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);
}

/** Each command line of the section's ```sh blocks, as words (the page quotes with "…" only). */
function commands(): string[][] {
  return blocks("sh")
    .flatMap((b) => b.split("\n"))
    .filter((l) => l.trim() && !l.trim().startsWith("#"))
    .map((l) => [...l.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!));
}

function runNode(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) => child.once("exit", (code) => (clearTimeout(timer), resolve({ code, stdout, stderr }))));
}

describe("examples/streaming README (TypeScript)", () => {
  it("server, streaming worker, client printing the story as it comes: the page's output", async () => {
    const [start, worker, client, ...rest] = commands();
    expect(rest).toEqual([]);
    expect(start).toEqual(["npm", "start"]);
    expect(worker!.slice(0, 3)).toEqual(["node", "dist/cli/main.js", "worker"]);
    expect(client!.slice(0, 2)).toEqual(["node", "examples/streaming/client.js"]);

    const server = await spawnCli({ dataDir: await makeTempDir("sluice-streaming-example-") });
    const w = spawnCliCommand([...worker!.slice(2), "--url", server.url]);
    await waitFor(() => w.stdout().includes("Sluice worker ready"), { timeoutMs: 30_000, what: "the worker to start" });

    // The page's `node`, with the SDK's source (as the worker gets it through the CLI entry).
    const out = await runNode(["--conditions=sluice-source", "--import", "tsx", ...client!.slice(1)], { SLUICE_URL: server.url });
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    const [expected] = blocks("text");
    expect(out.stdout).toBe(expected);

    // The job streamed: a chunk per token, each stored, in more than one output request.
    const tokens = Number(/\((\d+) tokens\)/.exec(expected!)![1]);
    const listed = (await (await fetch(`${server.url}/v1/queues/stories/jobs`)).json()) as { jobs: Array<{ id: string; status: string; output: { text: string } }> };
    expect(listed.jobs).toHaveLength(1);
    const job = listed.jobs[0]!;
    expect(job.status).toBe("succeeded");
    expect(`${client!.slice(2).join(" ")}${job.output.text}\n(${tokens} tokens)\n`).toBe(expected);
    const chunks = (await (await fetch(`${server.url}/v1/jobs/${job.id}/output-chunks`)).json()) as { chunks: string[]; done: boolean };
    expect([chunks.chunks.length, chunks.done, chunks.chunks.join("")]).toEqual([tokens, true, job.output.text]);
    const events = await (await fetch(`${server.url}/v1/jobs/${job.id}/events?since=0`)).text();
    expect(events.match(/^event: job\.output$/gm)!.length).toBeGreaterThan(1);
  });
});
