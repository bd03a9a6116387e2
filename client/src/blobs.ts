/**
 * `sluice.blobs`: upload a file ahead of the job it goes to (a blob belongs to one job), or look a blob up by id. Submits
 * and workers upload through the same calls (`uploadAll`), each attachment in parallel.
 */
import { BlobAttachment } from "./attachment.js";
import type { Attachment } from "./attachment-shape.js";
import { type AttachmentSource, checkAttachmentNames, resolveSource } from "./attachment-source.js";
import type { BlobTransfer } from "./blob-transfer.js";

export interface UploadOptions {
  /** The blob's content type; by default the source's own (a Blob's type, a path's extension), else application/octet-stream. */
  contentType?: string;
  signal?: AbortSignal;
}

export class BlobsClient {
  constructor(readonly transfer: BlobTransfer) {}

  /** Uploads `source` as a new blob (or, for `{blobId}`, looks it up) and answers it as an Attachment. */
  async upload(source: AttachmentSource, opts: UploadOptions = {}): Promise<Attachment> {
    const resolved = resolveSource(source, "upload");
    if ("blobId" in resolved) return this.get(resolved.blobId, opts);
    const plan = opts.contentType !== undefined ? { ...resolved, contentType: opts.contentType } : resolved;
    return new BlobAttachment(await this.transfer.upload(plan, opts.signal), this.transfer);
  }

  /** The uploaded blob `blobId` (GET /v1/blobs/{id}), with a fresh download URL. */
  async get(blobId: string, opts: { signal?: AbortSignal } = {}): Promise<Attachment> {
    return new BlobAttachment(await this.transfer.info(blobId, opts.signal), this.transfer);
  }

  /**
   * Every source uploaded (in parallel; an existing blob is not uploaded again), as the blob ids a
   * submit's `attachments` or a complete's `outputAttachments` carry. Names are checked first.
   */
  async uploadAll(sources: Readonly<Record<string, AttachmentSource>>, what: string, signal?: AbortSignal): Promise<Record<string, string>> {
    const entries = Object.entries(sources);
    checkAttachmentNames(
      entries.map(([name]) => name),
      what,
    );
    const plans = entries.map(([name, source]) => [name, resolveSource(source, name)] as const);
    const ids = await Promise.all(plans.map(async ([, r]) => ("blobId" in r ? r.blobId : (await this.transfer.upload(r, signal)).blobId)));
    return Object.fromEntries(plans.map(([name], i) => [name, ids[i]!]));
  }
}
