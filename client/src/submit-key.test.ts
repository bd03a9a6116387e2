/**
 * The SDK's own Idempotency-Key: sent when a submit may be retried (so a resend can't create a
 * second job), not when retries are off; the caller's key is always sent.
 */
import { describe, expect, it } from "vitest";
import type { FetchLike } from "./http.js";
import { Sluice } from "./sluice.js";

function recording(): FetchLike & { keys: Array<string | undefined> } {
  const keys: Array<string | undefined> = [];
  const f = (async (_url: string, init: RequestInit) => {
    keys.push((init.headers as Record<string, string>)["idempotency-key"]);
    const job = { id: "j1", queue: "q", status: "queued", input: 1, output: null, error: null, attempt: 0, maxAttempts: 3, priority: 0, progress: null, createdAt: "", startedAt: null, finishedAt: null, idempotencyKey: null, metadata: null };
    return new Response(JSON.stringify({ job }), { status: 201, headers: { "content-type": "application/json" } });
  }) as FetchLike & { keys: Array<string | undefined> };
  f.keys = keys;
  return f;
}

describe("submit's Idempotency-Key", () => {
  it("is generated when the SDK may retry (the default)", async () => {
    const fetch = recording();
    await new Sluice({ url: "http://x", fetch }).queue("q").submit(1);
    expect(fetch.keys[0]).toMatch(/^sdk-[0-9a-f-]{36}$/);
  });

  it("is not generated with attempts: 1 (nothing will be resent)", async () => {
    const fetch = recording();
    await new Sluice({ url: "http://x", fetch, attempts: 1 }).queue("q").submit(1);
    expect(fetch.keys[0]).toBeUndefined();
  });

  it("is the caller's when given, retries or not", async () => {
    const fetch = recording();
    await new Sluice({ url: "http://x", fetch, attempts: 1 }).queue("q").submit(1, { idempotencyKey: "req-1" });
    expect(fetch.keys[0]).toBe("req-1");
  });
});
