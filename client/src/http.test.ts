/**
 * The HTTP layer's error mapping and retry policy, against a scripted fetch: these are the rules
 * that decide what a caller sees, independent of any server.
 */
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { SluiceApiError, SluiceNetworkError } from "./errors.js";
import { type FetchLike, HttpClient } from "./http.js";
import type { Timers } from "./timers.js";

/** Timers whose delays elapse at once (retries are exercised without waiting), recording each. */
function instantTimers(): Timers & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    nowMs: () => 0,
    schedule(delayMs, fn) {
      // Only retry sleeps are run at once; the per-request timeout is never allowed to fire.
      if (delayMs < 30_000) {
        delays.push(delayMs);
        queueMicrotask(fn);
      }
      return () => {};
    },
  };
}

function scripted(responses: (Response | Error)[]): FetchLike & { calls: RequestInit[] } {
  const calls: RequestInit[] = [];
  const f = (async (_url: string, init: RequestInit) => {
    calls.push(init);
    const next = responses.shift();
    if (!next) throw new Error("no more scripted responses");
    if (next instanceof Error) throw next;
    return next;
  }) as FetchLike & { calls: RequestInit[] };
  f.calls = calls;
  return f;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

describe("HttpClient", () => {
  it("turns the server's error body into SluiceApiError with code and status", async () => {
    const http = new HttpClient({ url: "http://x/", fetch: scripted([json(404, { error: { code: "JobNotFound", message: "no such job" } })]), timers: instantTimers() });
    const err = await http.request("GET", "/v1/jobs/1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SluiceApiError);
    expect(err).toMatchObject({ code: "JobNotFound", status: 404, message: "no such job" });
  });

  it("retries network failures and 503s with jittered backoff, up to maxAttempts", async () => {
    const fetch = scripted([new TypeError("fetch failed"), json(503, { error: { code: "Unavailable", message: "restarting" } }), json(200, { ok: 1 })]);
    const timers = instantTimers();
    const http = new HttpClient({ url: "http://x", fetch, timers, random: () => 0.5 });
    const res = await http.request<{ ok: number }>("GET", "/y", { maxAttempts: 3 });
    expect(res.body).toEqual({ ok: 1 });
    expect(fetch.calls).toHaveLength(3);
    expect(timers.delays.filter((d) => d < 30_000 && d !== 0)).toEqual([50, 100]);
  });

  it("gives up after maxAttempts with the last error, unwrapped", async () => {
    const http = new HttpClient({ url: "http://x", fetch: scripted([new TypeError("fetch failed"), new TypeError("fetch failed")]), timers: instantTimers() });
    await expect(http.request("GET", "/y", { maxAttempts: 2 })).rejects.toBeInstanceOf(SluiceNetworkError);
    const http2 = new HttpClient({ url: "http://x", fetch: scripted([json(503, { error: { code: "Busy", message: "m" } })]), timers: instantTimers() });
    await expect(http2.request("GET", "/y")).rejects.toMatchObject({ name: "SluiceApiError", code: "Busy", status: 503 });
  });

  it("never retries a client error", async () => {
    const fetch = scripted([json(409, { error: { code: "LeaseExpired", message: "m" } })]);
    const http = new HttpClient({ url: "http://x", fetch, timers: instantTimers() });
    await expect(http.request("POST", "/y", { body: {}, maxAttempts: 5 })).rejects.toMatchObject({ code: "LeaseExpired" });
    expect(fetch.calls).toHaveLength(1);
  });

  it("rejects with an already-aborted signal's reason and sends nothing", async () => {
    const fetch = scripted([json(200, { ok: 1 })]);
    const http = new HttpClient({ url: "http://x", fetch, timers: instantTimers() });
    const reason = new Error("caller gave up");
    await expect(http.request("GET", "/y", { signal: AbortSignal.abort(reason), maxAttempts: 3 })).rejects.toBe(reason);
    expect(fetch.calls).toHaveLength(0);
  });

  it("sends JSON with the bearer token, and maps a non-JSON error page to Http<status>", async () => {
    const fetch = scripted([new Response("<html>bad gateway</html>", { status: 400 })]);
    const http = new HttpClient({ url: "http://x", token: "t0k", fetch, timers: instantTimers() });
    await expect(http.request("POST", "/y", { body: { a: 1 } })).rejects.toMatchObject({ code: "Http400", status: 400 });
    const headers = fetch.calls[0]!.headers as Record<string, string>;
    expect(headers.authorization).toBe("Bearer t0k");
    expect(headers["content-type"]).toBe("application/json");
    expect(fetch.calls[0]!.body).toBe('{"a":1}');
  });

  it("reads an NDJSON answer from a WHATWG stream and from a Node Readable alike, lines split across chunks", async () => {
    // Chunk boundaries fall inside a line and inside a multi-byte character.
    const bytes = Buffer.from('{"n":1,"s":"é"}\n{"n":2}\n{"n":3}');
    const chunks = [bytes.subarray(0, 5), bytes.subarray(5, 14), bytes.subarray(14, 21), bytes.subarray(21)];
    const ndjson = { status: 200, headers: { "content-type": "application/x-ndjson" } };
    const web = new Response(new ReadableStream({ start: (c) => (chunks.forEach((ch) => c.enqueue(ch)), c.close()) }), ndjson);
    const node = { status: 200, ok: true, headers: new Headers(ndjson.headers), body: Readable.from(chunks), text: () => Promise.reject(new Error("not read whole")) } as unknown as Response;
    for (const res of [web, node]) {
      const lines: unknown[] = [];
      await new HttpClient({ url: "http://x", fetch: scripted([res]), timers: instantTimers() }).requestLines("POST", "/y", {}, (l) => lines.push(l));
      expect(lines).toEqual([{ n: 1, s: "é" }, { n: 2 }, { n: 3 }]);
    }
  });
});

describe("HttpClient streamed answers", () => {
  it("drops an attempt's timeout timer when the caller aborts, even if the body read never ends", async () => {
    const live = new Set<number>();
    let next = 0;
    const timers: Timers = {
      nowMs: () => 0,
      schedule() {
        const id = next++;
        live.add(id);
        return () => live.delete(id);
      },
    };
    // A body that never ends and never errors, as an aborted fetch body can be left.
    const fetch: FetchLike = async () => new Response(new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) }), { status: 200 });
    const http = new HttpClient({ url: "http://x/", fetch, timers });
    const caller = new AbortController();
    let reading!: () => void;
    const started = new Promise<void>((resolve) => (reading = resolve));
    void http
      .requestStream("GET", "/v1/jobs/1/events", { signal: caller.signal, timeoutMs: Number.MAX_SAFE_INTEGER }, "text/event-stream", () => {
        reading();
        return new Promise<void>(() => {});
      })
      .catch(() => {});
    await started;
    expect(live.size).toBe(1);
    caller.abort();
    expect(live.size).toBe(0);
  });
});
