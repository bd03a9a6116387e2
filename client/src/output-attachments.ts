/**
 * ctx.attach(): the files a handler attaches to its job's result. Each is uploaded at once (in
 * parallel with the handler's work); the worker waits for every upload before it reports, and
 * sends their blob ids with the complete as `outputAttachments`.
 */
import { BlobAttachment } from "./attachment.js";
import type { Attachment } from "./attachment-shape.js";
import { type AttachmentSource, checkAttachmentNames, resolveSource } from "./attachment-source.js";
import type { BlobTransfer } from "./blob-transfer.js";

export interface AttachOptions {
  /** The file's content type; by default the source's own (a Blob's type, a path's extension), else application/octet-stream. */
  contentType?: string;
}

export class OutputAttachments {
  private readonly uploads = new Map<string, Promise<Attachment>>();

  constructor(private readonly transfer: BlobTransfer) {}

  /** Starts the upload; resolves with the stored Attachment. Attaching a name again replaces it. */
  attach(name: string, source: AttachmentSource, opts: AttachOptions = {}): Promise<Attachment> {
    checkAttachmentNames(this.uploads.has(name) ? [...this.uploads.keys()] : [...this.uploads.keys(), name], "ctx.attach()");
    const resolved = resolveSource(source, name);
    const upload = (async () => {
      if ("blobId" in resolved) return source instanceof BlobAttachment ? source : new BlobAttachment(await this.transfer.info(resolved.blobId), this.transfer);
      const plan = opts.contentType !== undefined ? { ...resolved, contentType: opts.contentType } : resolved;
      return new BlobAttachment(await this.transfer.upload(plan), this.transfer);
    })();
    // Settled by settle(): unobserved here, a failed upload must not crash the process.
    upload.catch(() => undefined);
    this.uploads.set(name, upload);
    return upload;
  }

  get size(): number {
    return this.uploads.size;
  }

  /** Waits for every upload: their blob ids by name, or the first upload's failure. */
  async settle(): Promise<{ ok: true; blobIds: Record<string, string> } | { ok: false; error: unknown }> {
    const names = [...this.uploads.keys()];
    const results = await Promise.allSettled(this.uploads.values());
    const failed = results.find((r) => r.status === "rejected");
    if (failed) return { ok: false, error: failed.reason };
    return { ok: true, blobIds: Object.fromEntries(names.map((name, i) => [name, (results[i] as PromiseFulfilledResult<Attachment>).value.blobId])) };
  }
}
