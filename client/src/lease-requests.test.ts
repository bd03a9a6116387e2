/** Lease requests name their worker, and stop doing so for a server from before the workers list. */
import { describe, expect, it } from "vitest";
import { type FetchLike, HttpClient } from "./http.js";
import { LeaseRequests } from "./lease-requests.js";
import { systemTimers } from "./timers.js";

/** A server that refuses `workerId` as an unknown field, as one from before GET /v1/workers does; records each body. */
function oldServer(bodies: Array<Record<string, unknown>>): FetchLike {
  return async (_url, init) => {
    const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
    bodies.push(body);
    const refused = "workerId" in body;
    const answer = refused ? { error: { code: "ValidationFailed", message: "body.workerId is not a field of this request." } } : { jobs: [], results: [] };
    return new Response(JSON.stringify(answer), { status: refused ? 400 : 200, headers: { "content-type": "application/json" } });
  };
}

describe("LeaseRequests", () => {
  it("sends labels and workerId with every lease request, the acks' too", async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const fetch: FetchLike = async (_url, init) => {
      bodies.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
      return new Response('{"jobs":[],"results":[]}', { status: 200, headers: { "content-type": "application/json" } });
    };
    const requests = new LeaseRequests(new HttpClient({ url: "http://x", fetch, timers: systemTimers }), "q", { waitSeconds: 0, leaseSeconds: 30, labels: { gpu: "a100" }, workerId: "w-1" });
    await requests.lease(4, new AbortController().signal);
    await requests.ack(1, [], []);
    expect(bodies.map((b) => [b.labels, b.workerId])).toEqual([
      [{ gpu: "a100" }, "w-1"],
      [{ gpu: "a100" }, "w-1"],
    ]);
  });

  it("to a server that refuses workerId, sends the request again without it, and never sends it again", async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const requests = new LeaseRequests(new HttpClient({ url: "http://x", fetch: oldServer(bodies), timers: systemTimers }), "q", { waitSeconds: 0, leaseSeconds: 30, workerId: "w-1" });
    expect(await requests.lease(1, new AbortController().signal)).toEqual([]);
    await requests.ack(1, [], []);
    expect(bodies.map((b) => "workerId" in b)).toEqual([true, false, false]);
  });
});
