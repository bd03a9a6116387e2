/**
 * The job event log across a real kill -9: a client streams /v1/events while jobs are submitted,
 * leased and completed; the server is SIGKILLed mid-traffic and restarted on the same data dir;
 * the client resumes with Last-Event-ID. What it saw over both connections must be exactly the
 * log as the restarted server replays it from the start (nothing missed, nothing twice, ids in
 * order), and every transition a client was told of must be in it.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

afterEach(killAllChildren);
afterAll(removeTempDirs);

interface Seen {
  id: number;
  type: string;
  jobId: string;
}

/** Reads an SSE stream into `out` until it ends or breaks (a killed server); resolves then. */
async function record(url: string, headers: Record<string, string>, out: Seen[], signal: AbortSignal): Promise<void> {
  try {
    const res = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const lines = buffer.slice(0, end).split("\n");
        buffer = buffer.slice(end + 2);
        const id = lines.find((l) => l.startsWith("id: "))?.slice(4);
        const data = lines.find((l) => l.startsWith("data: "))?.slice(6);
        if (id === undefined || data === undefined) continue;
        const event = JSON.parse(data) as { type: string; job: { id: string } };
        out.push({ id: Number(id), type: event.type, jobId: event.job.id });
      }
    }
  } catch {
    // The server was killed under the stream (or the test ended it): what was read stands.
  }
}

async function post(url: string, body: unknown): Promise<{ status: number; json: { job?: { id: string }; jobs?: Array<{ id: string; leaseId: string }> } }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as never };
}

describe("the job event log across kill -9", () => {
  it("a stream resumed after the restart has seen exactly the log: every acknowledged transition, once, in order", async () => {
    const dataDir = await makeTempDir("sluice-events-kill9-");
    const first = await spawnCli({ dataDir });
    const seen: Seen[] = [];
    const stop = new AbortController();
    const reading = record(`${first.url}/v1/events`, {}, seen, stop.signal);
    await waitFor(async () => (await post(`${first.url}/v1/queues/warm/jobs`, { input: 0 })).status === 201 && seen.length > 0, { what: "the stream to be live" });

    // Traffic: submits and a worker completing them, until the kill; every acknowledgement noted.
    const acknowledged: Array<{ type: string; jobId: string }> = [];
    let killed = false;
    const traffic = (async () => {
      for (let n = 0; !killed; n++) {
        try {
          const submitted = await post(`${first.url}/v1/queues/q/jobs`, { input: { n } });
          if (submitted.status === 201) acknowledged.push({ type: "job.queued", jobId: submitted.json.job!.id });
          const leased = await post(`${first.url}/v1/queues/q/leases`, { max: 1 });
          for (const job of leased.json.jobs ?? []) {
            const done = await post(`${first.url}/v1/jobs/${job.id}/complete`, { leaseId: job.leaseId, output: n });
            if (done.status === 200) acknowledged.push({ type: "job.succeeded", jobId: job.id });
          }
        } catch {
          return; // the server is gone
        }
      }
    })();
    await waitFor(() => acknowledged.length >= 40, { what: "traffic before the kill", timeoutMs: 30_000 });
    process.kill(first.pid, "SIGKILL");
    killed = true;
    await first.exited;
    await traffic;
    await reading;
    const beforeKill = seen.length;
    expect(beforeKill).toBeGreaterThan(0);

    const second = await spawnCli({ dataDir, port: first.port });
    const lastId = String(seen[seen.length - 1]!.id);
    const resumed = record(`${second.url}/v1/events`, { "last-event-id": lastId }, seen, stop.signal);
    // One transition after the restart: the resumed stream must carry at least that, after the gap.
    const after = await post(`${second.url}/v1/queues/q/jobs`, { input: "after the restart" });
    expect(after.status).toBe(201);
    acknowledged.push({ type: "job.queued", jobId: after.json.job!.id });
    // The full log as the restarted server has it, from the first id this client saw.
    const replay: Seen[] = [];
    const replaying = record(`${second.url}/v1/events?since=${seen[0]!.id - 1}`, {}, replay, stop.signal);
    const ackedIds = new Set(acknowledged.map((a) => `${a.type} ${a.jobId}`));
    // Wait on what was acknowledged, not on counts: a duplicate or a phantom event in `seen` must
    // reach the assertions below, not satisfy the wait early.
    const carries = (events: Seen[]): boolean => [...ackedIds].every((k) => events.some((e) => `${e.type} ${e.jobId}` === k));
    await waitFor(() => carries(replay) && carries(seen), {
      what: "the resumed stream to catch up with the replay",
      timeoutMs: 30_000,
    });
    stop.abort();
    await Promise.all([resumed, replaying]);
    expect(seen.length).toBeGreaterThan(beforeKill); // the resumed stream did carry events
    expect(seen.map((e) => e.id)).toEqual(replay.map((e) => e.id).slice(0, seen.length));
    expect(seen).toEqual(replay.slice(0, seen.length));
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // Every transition a client was answered for is in the log.
    const logged = new Set(replay.map((e) => `${e.type} ${e.jobId}`));
    expect([...ackedIds].filter((k) => !logged.has(k))).toEqual([]);
    console.log(`event log across kill -9: ${beforeKill} events streamed before the kill, ${seen.length - beforeKill} after resuming with Last-Event-ID ${lastId}; ${acknowledged.length} acknowledged transitions, each in the log once, ids increasing`);
  });
});
