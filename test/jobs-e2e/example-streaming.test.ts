/**
 * examples/streaming/README.md's TypeScript walkthrough, run as written: its commands are read
 * from the page — the server and the worker run through the same CLI entry (from source via tsx,
 * where the page runs the build in dist/, on a free port and a temp data dir), the client with
 * the SDK's source — and the client's output must be the page's. The job it ran must have
 * streamed: one stored chunk per token, sent in more than one request while it ran.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";
import { runNode, walkthrough } from "./readme-walkthrough.js";
import { killAllWorkers, spawnCliCommand } from "./workers.js";

afterEach(async () => {
  await killAllWorkers();
  await killAllChildren();
});
afterAll(removeTempDirs);

/** The page's TypeScript section. */
const { blocks, commands } = walkthrough("examples/streaming/README.md", "## TypeScript", "## Python");

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
    const out = await runNode(client!.slice(1), { SLUICE_URL: server.url });
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
