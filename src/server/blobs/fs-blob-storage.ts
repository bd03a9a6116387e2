/**
 * The default blob storage: files under <data dir>/blobs, behind URLs this server answers itself
 * (PUT and GET /v1/blobs/{id}/bytes), signed with an HMAC of the operation, blob and expiry under
 * a key from the store's secrets — so on PostgreSQL any node can check any node's URL (though only
 * the node that holds the file can serve it: many nodes want the S3 storage). Bytes are streamed
 * to and from disk with pipeline and measured on the way, never held whole.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { link, mkdir, open, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type BlobFacts, type BlobStorage, type PresignParams, type ServedBlobBytes, SluiceError, isBlobId } from "../../core/index.js";

const readChunkBytes = 1024 * 1024;

/** Counts and hashes what passes; refuses (MessageTooLong) past `maxBytes`. */
class Meter extends Transform {
  readonly hash = createHash("sha256");
  size = 0;
  constructor(private readonly maxBytes: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) return done(new SluiceError("MessageTooLong", `The body is over ${this.maxBytes} bytes, the most a blob may hold.`));
    this.hash.update(chunk);
    done(null, chunk);
  }
}

export class FsBlobStorage implements BlobStorage, ServedBlobBytes {
  readonly kind = "fs" as const;
  readonly served: ServedBlobBytes = this;
  private readonly key: Buffer;

  constructor(
    private readonly dir: string,
    secret: Uint8Array,
  ) {
    // Its own key: a URL signature never says anything about the secret's other uses.
    this.key = createHmac("sha256", secret).update("sluice blob url v1").digest();
  }

  async uploadUrl(p: PresignParams): Promise<string> {
    return this.url("upload", p);
  }

  async downloadUrl(p: PresignParams): Promise<string> {
    return this.url("download", p);
  }

  verify(op: "upload" | "download", blobId: string, expiresAtMs: number, signature: string): boolean {
    const expected = Buffer.from(this.sign(op, blobId, expiresAtMs));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  async write(blobId: string, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<BlobFacts> {
    await mkdir(this.dir, { recursive: true });
    const final = this.pathOf(blobId);
    const partial = `${final}.${randomBytes(6).toString("hex")}.part`;
    const meter = new Meter(maxBytes);
    try {
      await pipeline(body, meter, createWriteStream(partial, { flags: "wx" }));
      // On disk before the upload is answered, as every acknowledged write is.
      const handle = await open(partial, "r+");
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      // A link, not a rename: of two uploads racing to one blob, the first in wins and the
      // other is refused (EEXIST) instead of replacing bytes already measured.
      await link(partial, final);
      await this.syncDir();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new SluiceError("ValidationFailed", `Blob ${blobId} is uploaded already; make another blob for other bytes.`);
      throw err;
    } finally {
      await rm(partial, { force: true });
    }
    return { size: meter.size, sha256: meter.hash.digest("hex") };
  }

  read(blobId: string): AsyncIterable<Uint8Array> {
    return createReadStream(this.pathOf(blobId), { highWaterMark: readChunkBytes });
  }

  async stat(blobId: string): Promise<BlobFacts | undefined> {
    const path = this.pathOf(blobId);
    try {
      await stat(path);
    } catch {
      return undefined;
    }
    const meter = new Meter(Number.MAX_SAFE_INTEGER);
    await pipeline(createReadStream(path, { highWaterMark: readChunkBytes }), meter, async (source: AsyncIterable<unknown>) => {
      for await (const _ of source);
    });
    return { size: meter.size, sha256: meter.hash.digest("hex") };
  }

  async delete(blobId: string): Promise<void> {
    await rm(this.pathOf(blobId), { force: true });
  }

  private url(op: "upload" | "download", p: PresignParams): string {
    return `${p.origin}/v1/blobs/${p.blobId}/bytes?expires=${p.expiresAtMs}&signature=${this.sign(op, p.blobId, p.expiresAtMs)}`;
  }

  private sign(op: string, blobId: string, expiresAtMs: number): string {
    return createHmac("sha256", this.key).update(`${op}\n${blobId}\n${expiresAtMs}`).digest("base64url");
  }

  private pathOf(blobId: string): string {
    // Ids are checked where they come in; a path is never made of anything else.
    if (!isBlobId(blobId)) throw new Error(`invariant violated: not a blob id: ${blobId}`);
    return join(this.dir, blobId);
  }

  private async syncDir(): Promise<void> {
    const handle = await open(this.dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}
