/**
 * Schedules across a real kill -9: an every-second schedule runs on a CLI server that is SIGKILLed
 * and restarted on the same data dir. Every run from the first to the last has exactly one job —
 * the ones due while it was down created once at start, none of those created before the kill
 * created again — which is the exactly-once evidence for the closing note.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

afterEach(killAllChildren);
afterAll(removeTempDirs);

async function runKeys(url: string, queue: string): Promise<string[]> {
  const res = await fetch(`${url}/v1/queues/${queue}/jobs?limit=1000`);
  if (res.status === 404) return [];
  const body = (await res.json()) as { jobs: Array<{ idempotencyKey: string }> };
  return body.jobs.map((j) => j.idempotencyKey).sort();
}

describe("schedules across kill -9", () => {
  it("every run is one job: none lost while the server was down, none repeated", async () => {
    const dataDir = await makeTempDir("sluice-schedules-kill9-");
    const first = await spawnCli({ dataDir });
    const put = await fetch(`${first.url}/v1/schedules/tick`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ queue: "ticks", everySeconds: 1, input: { tick: true }, catchUp: "all" }),
    });
    expect(put.status).toBe(201);
    await waitFor(async () => (await runKeys(first.url, "ticks")).length >= 3, { what: "three runs before the kill", timeoutMs: 30_000 });
    const beforeKill = (await runKeys(first.url, "ticks")).length;
    process.kill(first.pid, "SIGKILL");
    await first.exited;
    const second = await spawnCli({ dataDir, port: first.port });
    const atRestart = (await runKeys(second.url, "ticks")).length;
    // Running again: wait for a few more runs after the restart.
    await waitFor(async () => (await runKeys(second.url, "ticks")).length >= atRestart + 3, { what: "runs after the restart", timeoutMs: 30_000 });
    const keys = await runKeys(second.url, "ticks");
    expect(new Set(keys).size).toBe(keys.length); // no run twice
    const seconds = keys.map((k) => Date.parse(k.slice("schedule:tick:".length)));
    for (let i = 1; i < seconds.length; i++) expect(seconds[i]! - seconds[i - 1]!, `a gap after ${keys[i - 1]}`).toBe(1_000); // no run lost
    const schedule = (await (await fetch(`${second.url}/v1/schedules/tick`)).json()) as { schedule: { lastRunAt: string } };
    expect(Date.parse(schedule.schedule.lastRunAt)).toBeGreaterThanOrEqual(seconds[seconds.length - 1]!);
    console.log(
      `schedules across kill -9: ${keys.length} runs (${keys[0]} … ${keys[keys.length - 1]}), ${new Set(keys).size} distinct jobs, no gap; ${beforeKill} jobs before the kill, ${atRestart} found at the restart`,
    );
  });
});
