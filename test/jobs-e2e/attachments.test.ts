/**
 * Attachments over REST (docs/jobs-api.md, "Attachments") with the default fs blob storage: a blob
 * made, its bytes PUT to the presigned uploadUrl (no token), submitted as a job's attachment,
 * downloaded by the worker through the lease's downloadUrl, an output attachment completed, and
 * each bad reference refused with a 400 naming its field, nothing written. On the store the
 * project runs (SQLite, and PostgreSQL in the postgres project).
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Secret } from "../../src/protocols/auth/principal.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import type { Json } from "../jobs/http-harness.js";

const token = "attach-token-0123456789";
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ config: { apiToken: new Secret(token) } });
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

const auth = { authorization: `Bearer ${token}` };
async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${server.url}${path}`, { method, headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text === "" ? {} : (JSON.parse(text) as Json) };
}

async function upload(bytes: Uint8Array, contentType = "image/png", headers: Record<string, string> = {}): Promise<string> {
  const made = await api("POST", "/v1/blobs", { contentType }, headers);
  expect(made.status).toBe(201);
  const put = await fetch(made.json.uploadUrl as string, { method: "PUT", body: bytes, headers: { "content-type": contentType } });
  expect(put.status).toBe(200);
  return made.json.blobId as string;
}

const sha = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

describe("attachments", () => {
  it("goes from upload through submit, lease, download and complete to the job's answer", async () => {
    const image = new Uint8Array(300_000).map((_, i) => (i * 7) % 251);
    const made = await api("POST", "/v1/blobs", { contentType: "image/png" });
    expect(made.status).toBe(201);
    expect(made.json.blobId).toMatch(/^blob_[0-9a-f]{32}$/);
    expect(Date.parse(made.json.expiresAt as string)).toBeGreaterThan(Date.now());
    // Before the bytes are in: 409 BlobNotUploaded.
    expect((await api("GET", `/v1/blobs/${made.json.blobId}`)).json.error.code).toBe("BlobNotUploaded");
    // The upload URL needs no token, and a tampered one is refused.
    const bad = await fetch(String(made.json.uploadUrl).replace(/signature=[^&]*/, `signature=${"A".repeat(43)}`), { method: "PUT", body: image });
    expect(bad.status).toBe(403);
    const put = await fetch(made.json.uploadUrl as string, { method: "PUT", body: image, headers: { "content-type": "application/octet-stream" } });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ blobId: made.json.blobId, size: image.length, sha256: sha(image) });
    // Once only; and a URL without its signature is a 400.
    const twice = await fetch(made.json.uploadUrl as string, { method: "PUT", body: "other bytes" });
    expect([twice.status, ((await twice.json()) as Json).error.message]).toEqual([400, expect.stringMatching(/uploaded already/)]);
    expect((await fetch(String(made.json.uploadUrl).replace(/&signature=.*/, ""), { method: "PUT", body: "x" })).status).toBe(400);
    const blobId = made.json.blobId as string;
    const got = await api("GET", `/v1/blobs/${blobId}`);
    expect(got.json).toMatchObject({ blobId, size: image.length, contentType: "image/png", sha256: sha(image) });
    const fetched = await fetch(got.json.downloadUrl as string);
    expect(fetched.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await fetched.arrayBuffer())).toEqual(image);

    const submitted = await api("POST", "/v1/queues/attach-flow/jobs", { input: { op: "thumb" }, attachments: { image: blobId } });
    expect(submitted.status).toBe(201);
    expect(submitted.json.job.attachments).toEqual({ image: { blobId, size: image.length, contentType: "image/png", sha256: sha(image) } });

    const leased = await api("POST", "/v1/queues/attach-flow/leases", { max: 1 });
    const job = leased.json.jobs[0];
    expect(job.attachments.image.downloadUrl).toEqual(expect.any(String));
    const bytes = new Uint8Array(await (await fetch(job.attachments.image.downloadUrl as string)).arrayBuffer());
    expect(sha(bytes)).toBe(sha(image));

    const thumb = new Uint8Array(1234).fill(9);
    const thumbId = await upload(thumb, "image/jpeg");
    const done = await api("POST", `/v1/jobs/${job.id}/complete`, { leaseId: job.leaseId, output: { ok: true }, outputAttachments: { "thumb.jpg": thumbId } });
    expect(done.status).toBe(200);
    expect(done.json.job.outputAttachments).toEqual({ "thumb.jpg": { blobId: thumbId, size: 1234, contentType: "image/jpeg", sha256: sha(thumb) } });
    const final = await api("GET", `/v1/jobs/${job.id}`);
    expect(final.json.job.status).toBe("succeeded");
    const out = final.json.job.outputAttachments["thumb.jpg"];
    expect(new Uint8Array(await (await fetch(out.downloadUrl as string)).arrayBuffer())).toEqual(thumb);
    expect(final.json.job.attachments.image.downloadUrl).toEqual(expect.any(String));
  });

  it("refuses each bad reference with a 400 naming the field, and writes nothing", async () => {
    const free = await upload(new Uint8Array([1, 2, 3]));
    const notUploaded = (await api("POST", "/v1/blobs", {})).json.blobId as string;
    const otherAccount = await upload(new Uint8Array([4]), "image/png", { "sluice-account": "111122223333" });
    const cases: Array<[unknown, RegExp]> = [
      [{ image: "blob_00000000000000000000000000000000" }, /attachments\.image: blob blob_0+ does not exist/],
      [{ image: otherAccount }, /attachments\.image: blob .* does not exist in this account/],
      [{ image: notUploaded }, /attachments\.image: blob .* has no bytes yet/],
      [{ "bad name": free }, /attachments: the name "bad name" is not 1–64/],
      [{ image: "nope" }, /attachments\.image: "nope" is not a blob id/],
      [Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`a${i}`, free])), /at most 16/],
      [{ a: free, b: free }, /attached under two names/],
    ];
    for (const [attachments, message] of cases) {
      const r = await api("POST", "/v1/queues/attach-refused/jobs", { input: 1, attachments });
      expect(r.status, JSON.stringify(attachments).slice(0, 80)).toBe(400);
      expect(r.json.error.code).toBe("ValidationFailed");
      expect(r.json.error.message).toMatch(message);
    }
    // Nothing written: no queue was made, and the free blob is still free to attach.
    expect((await api("GET", "/v1/queues/attach-refused")).status).toBe(404);
    const ok = await api("POST", "/v1/queues/attach-refused/jobs", { input: 1, attachments: { image: free } });
    expect(ok.status).toBe(201);
    // Held by that job now: another job can't take it.
    const again = await api("POST", "/v1/queues/attach-refused/jobs", { input: 2, attachments: { image: free } });
    expect(again.json.error.message).toMatch(/attached to job .* already/);
    // An idempotent replay of the first submit finds the blob held by the job it replays.
    const key = { "idempotency-key": "attach-replay" };
    const fresh = await upload(new Uint8Array([5]));
    const first = await api("POST", "/v1/queues/attach-refused/jobs", { input: 3, attachments: { image: fresh } }, key);
    const replay = await api("POST", "/v1/queues/attach-refused/jobs", { input: 3, attachments: { image: fresh } }, key);
    expect(replay.status).toBe(200);
    expect(replay.json.job.id).toBe(first.json.job.id);
  });

  it("documents the routes in /openapi.json", async () => {
    const doc = (await api("GET", "/openapi.json")).json;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/blobs", "/v1/blobs/{id}", "/v1/blobs/{id}/bytes"]));
    expect(doc.paths["/v1/blobs/{id}/bytes"].put.security).toEqual([]);
  });
});
