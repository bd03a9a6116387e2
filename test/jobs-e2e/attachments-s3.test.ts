/**
 * Attachments with --blob-store s3 against a real S3-compatible server (s3rver, offline): the
 * presigned upload and download URLs go straight to the bucket, Sluice measures the blob by
 * reading it once, and a blob uploaded through PostgreSQL node A is downloaded by a worker leasing
 * on node B. Run once (not again in the PostgreSQL project): the two-node case is PostgreSQL's.
 */
import { createHash } from "node:crypto";
// @ts-expect-error -- s3rver ships no types
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../jobs/http-harness.js";
import { startPostgresNodes } from "../support/postgres-nodes.js";
import { createDatabase } from "../support/postgres.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const bucket = "sluice-attachments";
let s3: { run(): Promise<{ port: number }>; close(): Promise<void> };
let endpoint: string;

beforeAll(async () => {
  // s3rver's own account: the AWS default chain reads these, as a real deployment's would.
  process.env.AWS_ACCESS_KEY_ID = "S3RVER";
  process.env.AWS_SECRET_ACCESS_KEY = "S3RVER";
  s3 = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: await makeTempDir("sluice-s3-"), configureBuckets: [{ name: bucket }] });
  const { port } = await s3.run();
  endpoint = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await stopAllServers();
  await s3.close();
  await removeTempDirs();
});

const s3Config = () => ({ blobStore: "s3" as const, blobBucket: bucket, blobEndpoint: endpoint, blobPathStyle: true });
const sha = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

async function api(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${url}${path}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text === "" ? {} : (JSON.parse(text) as Json) };
}

async function uploadThrough(url: string, bytes: Uint8Array, contentType: string): Promise<string> {
  const made = await api(url, "POST", "/v1/blobs", { contentType });
  expect(made.status).toBe(201);
  expect(made.json.uploadUrl).toContain(endpoint);
  const put = await fetch(made.json.uploadUrl as string, { method: "PUT", body: bytes });
  expect(put.status).toBe(200);
  return made.json.blobId as string;
}

describe("attachments on S3", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: s3Config() });
  });

  it("uploads to and downloads from the bucket through presigned URLs; Sluice measures the blob", async () => {
    const audio = new Uint8Array(200_000).map((_, i) => (i * 13) % 256);
    const blobId = await uploadThrough(server.url, audio, "audio/wav");
    const got = await api(server.url, "GET", `/v1/blobs/${blobId}`);
    expect(got.json).toMatchObject({ blobId, size: audio.length, contentType: "audio/wav", sha256: sha(audio) });
    const downloaded = await fetch(got.json.downloadUrl as string);
    expect(downloaded.headers.get("content-type")).toBe("audio/wav");
    expect(sha(new Uint8Array(await downloaded.arrayBuffer()))).toBe(sha(audio));
    // The fs storage's own byte routes are not served with S3.
    expect((await fetch(`${server.url}/v1/blobs/${blobId}/bytes?expires=1&signature=x`)).status).toBe(404);

    const job = (await api(server.url, "POST", "/v1/queues/s3-flow/jobs", { input: 1, attachments: { audio: blobId } })).json.job;
    expect(job.attachments.audio).toEqual({ blobId, size: audio.length, contentType: "audio/wav", sha256: sha(audio) });
    const leased = (await api(server.url, "POST", "/v1/queues/s3-flow/leases", { max: 1 })).json.jobs[0];
    expect(sha(new Uint8Array(await (await fetch(leased.attachments.audio.downloadUrl as string)).arrayBuffer()))).toBe(sha(audio));
    // A blob not yet uploaded is refused by name, as with the fs storage.
    const empty = (await api(server.url, "POST", "/v1/blobs", {})).json.blobId as string;
    const refused = await api(server.url, "POST", "/v1/queues/s3-flow/jobs", { input: 1, attachments: { audio: empty } });
    expect([refused.status, refused.json.error.message]).toEqual([400, expect.stringMatching(/attachments\.audio: blob .* has no bytes yet/)]);
  });

  it("a blob uploaded through node A is downloaded by a worker leasing on node B", async () => {
    const db = await createDatabase();
    const [a, b] = await startPostgresNodes(2, db.url, s3Config());
    const image = new Uint8Array(150_000).map((_, i) => (i * 31) % 256);
    const blobId = await uploadThrough(a!.url, image, "image/png");
    const submitted = await api(a!.url, "POST", "/v1/queues/cross/jobs", { input: { task: "resize" }, attachments: { image: blobId } });
    expect(submitted.status).toBe(201);
    const leased = (await api(b!.url, "POST", "/v1/queues/cross/leases", { max: 1, waitSeconds: 5 })).json.jobs[0];
    expect(leased.id).toBe(submitted.json.job.id);
    const bytes = new Uint8Array(await (await fetch(leased.attachments.image.downloadUrl as string)).arrayBuffer());
    expect(sha(bytes)).toBe(sha(image));
    // The worker's output, uploaded through B, is read through A.
    const out = new Uint8Array(999).fill(3);
    const outId = await uploadThrough(b!.url, out, "image/png");
    expect((await api(b!.url, "POST", `/v1/jobs/${leased.id}/complete`, { leaseId: leased.leaseId, outputAttachments: { small: outId } })).status).toBe(200);
    const final = (await api(a!.url, "GET", `/v1/jobs/${leased.id}`)).json.job;
    expect(sha(new Uint8Array(await (await fetch(final.outputAttachments.small.downloadUrl as string)).arrayBuffer()))).toBe(sha(out));
  });
});
