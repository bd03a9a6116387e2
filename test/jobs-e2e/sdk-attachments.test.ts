/**
 * Attachments through the TypeScript SDK against a real server (and its blob store): a submit
 * uploads bytes, a file by path and a stream; the worker reads them (whole and streamed), attaches
 * derived files; the caller reads those back — every byte checked by SHA-256. Plus a blob uploaded
 * ahead, names refused before anything is sent, and a failed upload failing the attempt.
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Attachment, BatchItemError, type Sluice } from "../../client/src/index.js";
import { useSdkServer } from "../support/sdk-server.js";
import { makeTempDir } from "../support/tmp.js";

let sluice: Sluice;
const { freshQueue, track } = useSdkServer("attach", (_server, client) => {
  sluice = client;
});
const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");
const reversed = (bytes: Uint8Array): Uint8Array => Uint8Array.from(bytes).reverse();

async function streamed(att: Attachment): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const part of att.stream()) parts.push(part);
  return Buffer.concat(parts);
}


describe("attachments through the SDK", () => {
  // wire: attachments
  it("uploads bytes, a path and a stream; the worker reads them and attaches results; the caller reads those back", async () => {
    const dir = await makeTempDir("sluice-attach-");
    const image = randomBytes(300_000);
    const audio = randomBytes(2 * 1024 * 1024 + 17);
    const notes = randomBytes(700_001);
    await writeFile(join(dir, "clip.wav"), audio);
    await writeFile(join(dir, "notes.bin"), notes);
    const q = sluice.queue(freshQueue());
    const seen: Record<string, { size: number; contentType: string; sha256: string; read: string; streamed: string }> = {};
    track(
      q.work(async (_job, ctx) => {
        for (const [name, att] of Object.entries(ctx.attachments)) {
          seen[name] = { size: att.size, contentType: att.contentType, sha256: att.sha256, read: sha256(await att.bytes()), streamed: sha256(await streamed(att)) };
        }
        const image = await ctx.attachments.image!.bytes();
        await ctx.attach("reversed", reversed(image), { contentType: "image/x-reversed" });
        await writeFile(join(dir, "out.wav"), reversed(await ctx.attachments.clip!.bytes()));
        await ctx.attach("clip", { path: join(dir, "out.wav") });
        return { images: 1 };
      }),
    );

    const job = await q.submit({ what: "reverse" }, { attachments: { image, clip: { path: join(dir, "clip.wav") }, notes: { data: createReadStream(join(dir, "notes.bin")), contentType: "text/plain" } } });
    expect(Object.keys(job.job.attachments).sort()).toEqual(["clip", "image", "notes"]);
    expect(job.job.attachments.clip).toMatchObject({ size: audio.length, contentType: "audio/wav", sha256: sha256(audio) });
    const done = await job.wait({ timeoutMs: 30_000 });
    expect([done.status, done.output]).toEqual(["succeeded", { images: 1 }]);

    expect(seen).toEqual({
      image: { size: image.length, contentType: "application/octet-stream", sha256: sha256(image), read: sha256(image), streamed: sha256(image) },
      clip: { size: audio.length, contentType: "audio/wav", sha256: sha256(audio), read: sha256(audio), streamed: sha256(audio) },
      notes: { size: notes.length, contentType: "text/plain", sha256: sha256(notes), read: sha256(notes), streamed: sha256(notes) },
    });
    const out = done.outputAttachments;
    expect(Object.keys(out).sort()).toEqual(["clip", "reversed"]);
    expect(out.reversed).toMatchObject({ size: image.length, contentType: "image/x-reversed", sha256: sha256(reversed(image)) });
    expect(sha256(await out.reversed!.bytes())).toBe(sha256(reversed(image)));
    expect(sha256(await streamed(out.clip!))).toBe(sha256(reversed(audio)));
    expect(out.clip!.contentType).toBe("audio/wav");
    // The same, read through GET /v1/jobs/{id} again (fresh download URLs), and as JSON the wire's facts only.
    const again = await sluice.jobs.get(job.id);
    expect(sha256(await again.outputAttachments.clip!.bytes())).toBe(sha256(reversed(audio)));
    const { blobId } = again.attachments.image!;
    expect(JSON.parse(JSON.stringify(again.attachments.image))).toEqual({ blobId, size: image.length, contentType: "application/octet-stream", sha256: sha256(image), downloadUrl: expect.stringContaining(blobId) });
  });

  it("a blob uploaded ahead is attached by its Attachment or its id, once; a worker passes an input on as an output by streaming it", async () => {
    const bytes = randomBytes(50_000);
    const blob = await sluice.blobs.upload(bytes, { contentType: "application/x-weights" });
    expect(blob).toMatchObject({ size: bytes.length, sha256: sha256(bytes), contentType: "application/x-weights" });
    const other = await sluice.blobs.upload(reversed(bytes));
    const q = sluice.queue(freshQueue());
    track(q.work(async (_job, ctx) => (await ctx.attach("same", ctx.attachments.model!.stream(), { contentType: ctx.attachments.model!.contentType })).sha256));
    const [a, b] = await Promise.all([q.run(1, { attachments: { model: blob }, timeoutMs: 30_000 }), q.run(2, { attachments: { model: { blobId: other.blobId } }, timeoutMs: 30_000 })]);
    for (const [done, input] of [[a, blob], [b, other]] as const) {
      expect(done.status).toBe("succeeded");
      expect(done.attachments.model!.blobId).toBe(input.blobId);
      expect(done.output).toBe(input.sha256);
      expect(done.outputAttachments.same).toMatchObject({ sha256: input.sha256, contentType: input.contentType });
      expect(done.outputAttachments.same!.blobId).not.toBe(input.blobId);
    }
    // A blob belongs to one job: the server refuses it for a second, and creates nothing.
    await expect(q.submit(3, { attachments: { model: blob } })).rejects.toThrow(/is attached to job .* already/);
    expect((await q.list()).jobs.map((j) => j.input).sort()).toEqual([1, 2]);
  });

  it("refuses a bad name or a 17th attachment before anything is sent", async () => {
    const q = sluice.queue(freshQueue());
    await expect(q.submit(1, { attachments: { "no spaces": new Uint8Array(1) } })).rejects.toThrow(/attachment name "no spaces" must be 1–64 characters/);
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`f${i}`, new Uint8Array(1)]));
    await expect(q.submit(1, { attachments: many })).rejects.toThrow(/17 attachments; a job takes at most 16/);
    await expect(q.submit(1, { attachments: { x: 42 as unknown as Uint8Array } })).rejects.toThrow(/attachment x: expected a Uint8Array/);
    // Nothing was sent: the queue, made by a job's first submit, does not exist.
    await expect(q.list()).rejects.toThrow(/queue does not exist/);
  });

  it("an upload that fails fails the attempt with its error; a batch handler's jobs attach files of their own", async () => {
    const q = sluice.queue(freshQueue());
    track(
      q.work(async (_job, ctx) => {
        void ctx.attach("missing", { blobId: "no-such-blob" }).catch(() => undefined);
        return "would have succeeded";
      }),
    );
    const failed = await q.run(1, { maxAttempts: 1, timeoutMs: 30_000 });
    expect(failed.status).toBe("failed");
    expect(failed.error?.message).toMatch(/blob/i);
    expect(failed.outputAttachments).toEqual({});

    const b = sluice.queue(freshQueue());
    track(
      b.work(
        async (jobs, ctx) =>
          Promise.all(
            jobs.map(async (job, i) => {
              if (job.input === 0) return new BatchItemError("skipped", { retryable: false });
              await ctx.items[i]!.attach("square", new TextEncoder().encode(String((job.input as number) ** 2)));
              return job.input;
            }),
          ),
        { batch: { size: 3, windowMs: 200 } },
      ),
    );
    const runs = await Promise.all([0, 3, 4].map((n) => b.run(n, { maxAttempts: 1, timeoutMs: 30_000 })));
    expect(runs.map((r) => r.status)).toEqual(["failed", "succeeded", "succeeded"]);
    expect(await Promise.all(runs.slice(1).map((r) => r.outputAttachments.square!.text()))).toEqual(["9", "16"]);
  });
});
