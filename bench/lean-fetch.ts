/**
 * A FetchLike for the Sluice SDK (its documented `fetch` option) on an undici keep-alive Pool.
 * Node's global fetch costs several hundred µs of CPU per call here (WHATWG streams, Request and
 * Response objects, AbortSignal plumbing): in the jobs row that was ≈ 4 ms of load-generator CPU
 * per job, 80 % of a core, so the bench measured fetch, not the server. Same rationale as
 * bench/sqs-client.ts for the SQS rows. Returns only what the SDK reads: status, ok, headers, text().
 */
import { Pool } from "undici";
import type { FetchLike } from "../client/src/index.js";

export interface LeanFetch {
  fetch: FetchLike;
  close(): Promise<void>;
}

export function leanFetch(baseUrl: string, connections: number): LeanFetch {
  const origin = new URL(baseUrl).origin;
  const pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 120_000 });
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    const res = await pool.request({
      path: url.pathname + url.search,
      method: (init.method ?? "GET") as "GET",
      headers: init.headers as Record<string, string>,
      body: (init.body as string | undefined) ?? null,
      signal: init.signal ?? undefined,
    });
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v);
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    // An NDJSON answer (a batch submit with ?wait) is read as it streams; everything else whole.
    if (headers.get("content-type")?.startsWith("application/x-ndjson")) {
      // undici's Node Readable as it is: the SDK reads it with for await (FetchLike). Wrapping it in
      // a WHATWG stream (Readable.toWeb) cost ≈ 7 % of the load generator's CPU in the jobs row.
      return { status: res.statusCode, ok, headers, body: res.body, text: () => res.body.text() } as unknown as Response;
    }
    const text = await res.body.text();
    const response = { status: res.statusCode, ok, headers, body: null, text: async () => text };
    return response as unknown as Response;
  };
  return { fetch, close: () => pool.destroy() };
}
