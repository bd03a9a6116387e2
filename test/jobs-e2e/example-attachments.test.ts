/**
 * examples/attachments/README.md's TypeScript walkthrough, run as written (readme-walkthrough.ts):
 * the server and the worker through the CLI entry on a free port and a temp data dir, the client
 * with the SDK's source; its output must be the page's, the file it saved the worker's attachment
 * (the edges of the page's picture, as edges.js computes them), and the job must show both files.
 */
import { createHash } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killAllChildren, repoRoot, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";
import { runNode, walkthrough } from "./readme-walkthrough.js";
import { killAllWorkers, spawnCliCommand } from "./workers.js";
// @ts-expect-error: the example is plain JavaScript, without type declarations
import { parsePgm, sobel, writePgm } from "../../examples/attachments/edges.js";

const { blocks, commands } = walkthrough("examples/attachments/README.md", "## TypeScript", "## Python");
const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

afterEach(async () => {
  await killAllWorkers();
  await killAllChildren();
});
afterAll(removeTempDirs);

describe("examples/attachments README (TypeScript)", () => {
  it("server, edges worker, client sending a picture and saving its edges: the page's output", async () => {
    const [start, worker, client, ...rest] = commands();
    expect(rest).toEqual([]);
    expect(start).toEqual(["npm", "start"]);
    expect(worker!.slice(0, 3)).toEqual(["node", "dist/cli/main.js", "worker"]);
    expect(client!.slice(0, 2)).toEqual(["node", "examples/attachments/client.js"]);
    const [input, output] = client!.slice(2) as [string, string];
    const saved = join(repoRoot, output);

    const server = await spawnCli({ dataDir: await makeTempDir("sluice-attachments-example-") });
    const w = spawnCliCommand([...worker!.slice(2), "--url", server.url]);
    await waitFor(() => w.stdout().includes("Sluice worker ready"), { timeoutMs: 30_000, what: "the worker to start" });
    try {
      const out = await runNode(client!.slice(1), { SLUICE_URL: server.url });
      expect(out.stderr).toBe("");
      expect(out.code).toBe(0);
      expect(out.stdout).toBe(blocks("text")[0]);

      const picture = readFileSync(join(repoRoot, input));
      const expected = writePgm(sobel(parsePgm(picture))) as Uint8Array;
      expect(sha256(readFileSync(saved))).toBe(sha256(expected));
      const listed = (await (await fetch(`${server.url}/v1/queues/edges/jobs`)).json()) as { jobs: Array<{ status: string; attachments: Record<string, { sha256: string }>; outputAttachments: Record<string, { sha256: string }> }> };
      expect(listed.jobs).toHaveLength(1);
      const job = listed.jobs[0]!;
      expect([job.status, job.attachments.image!.sha256, job.outputAttachments.edges!.sha256]).toEqual(["succeeded", sha256(picture), sha256(expected)]);
    } finally {
      rmSync(saved, { force: true });
    }
  });
});
