/**
 * The SDKs' attachments with --blob-store s3 (s3rver, offline): the TypeScript SDK uploads
 * straight to the bucket through the presigned URLs — bytes, a file, a stream of unknown length —
 * and a worker reads and attaches through them; then a client talks to PostgreSQL node A while the
 * worker leases on node B. Run once (not again in the PostgreSQL project): the two-node case is PostgreSQL's.
 */
import { createHash, randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
// @ts-expect-error -- s3rver ships no types
import S3rver from "s3rver";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Sluice, type Worker } from "../../client/src/index.js";
import { startPostgresNodes } from "../support/postgres-nodes.js";
import { createDatabase } from "../support/postgres.js";
import { startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { within } from "../support/wait.js";

const bucket = "sluice-sdk-attachments";
let s3: { run(): Promise<{ port: number }>; close(): Promise<void> };
let endpoint: string;
const workers: Worker[] = [];
const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

beforeAll(async () => {
  // s3rver's own account: the AWS default chain reads these, as a real deployment's would.
  process.env.AWS_ACCESS_KEY_ID = "S3RVER";
  process.env.AWS_SECRET_ACCESS_KEY = "S3RVER";
  s3 = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: await makeTempDir("sluice-sdk-s3-"), configureBuckets: [{ name: bucket }] });
  endpoint = `http://127.0.0.1:${(await s3.run()).port}`;
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => within(10_000, w.close({ timeoutMs: 2_000 }), "worker close")));
});
afterAll(async () => {
  await stopAllServers();
  await s3.close();
  await removeTempDirs();
});

const s3Config = () => ({ blobStore: "s3" as const, blobBucket: bucket, blobEndpoint: endpoint, blobPathStyle: true });

async function roundTrip(clientUrl: string, workerUrl: string): Promise<void> {
  const dir = await makeTempDir("sluice-sdk-s3-files-");
  const image = randomBytes(150_000);
  const audio = randomBytes(1_000_003);
  const notes = randomBytes(70_001);
  await writeFile(join(dir, "clip.wav"), audio);
  const queue = `s3-sdk-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const worker = new Sluice({ url: workerUrl }).queue(queue).work(async (_job, ctx) => {
    const sums: Record<string, string> = {};
    for (const [name, att] of Object.entries(ctx.attachments)) sums[name] = sha256(await att.bytes());
    await ctx.attach("reversed", Uint8Array.from(await ctx.attachments.clip!.bytes()).reverse());
    return sums;
  });
  workers.push(worker);
  const client = new Sluice({ url: clientUrl });
  const job = await client.queue(queue).submit({}, { attachments: { image, clip: { path: join(dir, "clip.wav") }, notes: Readable.from([notes.subarray(0, 70_000), notes.subarray(70_000)]) } });
  expect(job.job.attachments.notes).toMatchObject({ size: notes.length, sha256: sha256(notes) });
  const done = await job.wait({ timeoutMs: 30_000 });
  expect([done.status, done.output]).toEqual(["succeeded", { image: sha256(image), clip: sha256(audio), notes: sha256(notes) }]);
  expect(done.outputAttachments.reversed!.downloadUrl).toContain(endpoint);
  expect(sha256(await done.outputAttachments.reversed!.bytes())).toBe(sha256(Uint8Array.from(audio).reverse()));
}

describe("SDK attachments on S3", () => {
  it("bytes, a file and a stream of unknown length go to the bucket and come back, through the SDKs", async () => {
    const server = await startTestServer({ config: s3Config() });
    await roundTrip(server.url, server.url);
  });

  it("a client on PostgreSQL node A, a worker on node B", async () => {
    const db = await createDatabase();
    const [a, b] = await startPostgresNodes(2, db.url, s3Config());
    await roundTrip(a!.url, b!.url);
  });
});
