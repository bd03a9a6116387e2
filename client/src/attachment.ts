/**
 * A job's attachment as the SDK hands it out (`job.attachments.image`, `ctx.attachments.image`,
 * `done.outputAttachments.result`): the blob's facts, and its bytes a call away — whole, checked
 * against the blob's SHA-256, or as a stream that is never held whole in memory.
 */
import type { Attachment, AttachmentInfo, ReadOptions } from "./attachment-shape.js";
import type { BlobTransfer } from "./blob-transfer.js";
import type { Job } from "./wire.js";

export class BlobAttachment implements Attachment {
  readonly blobId: string;
  /** Bytes. */
  readonly size: number;
  readonly contentType: string;
  /** Lowercase hex SHA-256 of the bytes. */
  readonly sha256: string;
  /** Presigned (no credentials needed) until `expiresAt`; the SDK asks for a fresh one when it is gone. */
  readonly downloadUrl?: string;
  readonly expiresAt?: string;
  // A private field, so JSON.stringify and console.log show the wire facts only.
  readonly #transfer: BlobTransfer;

  constructor(info: AttachmentInfo, transfer: BlobTransfer) {
    this.blobId = info.blobId;
    this.size = info.size;
    this.contentType = info.contentType;
    this.sha256 = info.sha256;
    if (info.downloadUrl !== undefined) this.downloadUrl = info.downloadUrl;
    if (info.expiresAt !== undefined) this.expiresAt = info.expiresAt;
    this.#transfer = transfer;
  }

  async bytes(opts: ReadOptions = {}): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    let length = 0;
    for await (const chunk of await this.#transfer.download(this, opts.signal)) {
      chunks.push(chunk);
      length += chunk.byteLength;
    }
    const bytes = concat(chunks, length);
    if (length !== this.size) throw new Error(`attachment ${this.blobId}: got ${length} bytes, expected ${this.size}`);
    const digest = hex(new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)));
    if (this.sha256 && digest !== this.sha256.toLowerCase()) throw new Error(`attachment ${this.blobId}: SHA-256 ${digest} differs from the stored ${this.sha256}`);
    return bytes;
  }

  async text(opts: ReadOptions = {}): Promise<string> {
    return new TextDecoder().decode(await this.bytes(opts));
  }

  stream(opts: ReadOptions = {}): ReadableStream<Uint8Array> {
    let it: AsyncIterator<Uint8Array> | undefined;
    let length = 0;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        it ??= (await this.#transfer.download(this, opts.signal))[Symbol.asyncIterator]();
        const { done, value } = await it.next();
        if (!done) {
          length += value.byteLength;
          controller.enqueue(value);
        } else if (length !== this.size) controller.error(new Error(`attachment ${this.blobId}: got ${length} bytes, expected ${this.size}`));
        else controller.close();
      },
      cancel: async (reason) => {
        await it?.return?.(reason);
      },
    });
  }

  toJSON(): AttachmentInfo {
    return { blobId: this.blobId, size: this.size, contentType: this.contentType, sha256: this.sha256, ...(this.downloadUrl !== undefined ? { downloadUrl: this.downloadUrl, expiresAt: this.expiresAt } : {}) };
  }
}

/** The map a job shows, as Attachments; `{}` for none (or a server from before attachments). */
export function attachmentsOf(raw: unknown, transfer: BlobTransfer): Readonly<Record<string, Attachment>> {
  if (typeof raw !== "object" || raw === null) return noAttachments;
  const out: Record<string, Attachment> = {};
  for (const [name, info] of Object.entries(raw as Record<string, AttachmentInfo>)) out[name] = info instanceof BlobAttachment ? info : new BlobAttachment(info, transfer);
  return out;
}

/** The SDK's jobs carry their attachments as Attachments (in place: the job is the wire's object). */
export function withAttachments(job: Pick<Job, "attachments" | "outputAttachments">, transfer: BlobTransfer): void {
  job.attachments = attachmentsOf(job.attachments, transfer);
  job.outputAttachments = attachmentsOf(job.outputAttachments, transfer);
}

const noAttachments: Readonly<Record<string, Attachment>> = Object.freeze({});

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}
