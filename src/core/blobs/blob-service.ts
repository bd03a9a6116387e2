/**
 * Attachments' blobs: made by POST /v1/blobs (a record, then an upload URL), uploaded straight to
 * the storage, described by GET /v1/blobs/{id}, and swept when nothing holds them. Core decides;
 * the store keeps the records and the storage (a port) the bytes.
 */
import type { Clock } from "../clock.js";
import { SluiceError, fail } from "../errors.js";
import type { IdSource } from "../ids.js";
import { limits } from "../limits.js";
import type { JobRecord } from "../job.js";
import type { JobStore } from "../job-store.js";
import { type BlobRecord, attachmentsJsonOf, blobIdOf, checkAttachmentMap, isBlobId, parseAttachments } from "./blob.js";
import type { BlobStorage } from "./blob-storage.js";
import type { BlobStore } from "./blob-store.js";

export interface BlobServiceDeps {
  store: BlobStore & Pick<JobStore, "jobGet">;
  storage: BlobStorage;
  clock: Clock;
  ids: IdSource;
  /** The account's quota of stored attachment bytes, if it has one. */
  maxBlobBytesOf?: (account: string) => number | undefined;
  onQuotaRefused?: (account: string) => void;
}

/** A blob as GET /v1/blobs/{id} answers it: uploaded, with a download URL. */
export interface BlobView {
  blob: BlobRecord & { size: number; sha256: string; uploadedAtMs: number };
  downloadUrl: string;
  expiresAtMs: number;
}

const contentTypePattern = /^[\x21-\x7e][\x20-\x7e]*$/;

export class BlobService {
  constructor(private readonly deps: BlobServiceDeps) {}

  get storageKind(): "fs" | "s3" {
    return this.deps.storage.kind;
  }

  /** Whether this server answers the storage's URLs itself (fs): PUT and GET /v1/blobs/{id}/bytes. */
  get servesBytes(): boolean {
    return this.deps.storage.served !== undefined;
  }

  async create(account: string, p: { contentType?: string }, origin: string): Promise<{ blob: BlobRecord; uploadUrl: string; expiresAtMs: number }> {
    const contentType = p.contentType ?? "application/octet-stream";
    if (typeof contentType !== "string" || contentType.length > limits.blobs.contentTypeMaxLength || !contentTypePattern.test(contentType)) {
      fail("ValidationFailed", `contentType must be 1–${limits.blobs.contentTypeMaxLength} printable ASCII characters (a media type such as image/png).`);
    }
    await this.checkQuota(account);
    const nowMs = this.deps.clock.nowMs();
    const expiresAtMs = nowMs + limits.blobs.urlSeconds * 1000;
    const blob: BlobRecord = { id: blobIdOf(this.deps.ids.messageId()), account, contentType, createdAtMs: nowMs, expiresAtMs: nowMs + limits.blobs.unreferencedSeconds * 1000 };
    await this.deps.store.blobCreate({ blob });
    const uploadUrl = await this.deps.storage.uploadUrl({ blobId: blob.id, contentType, expiresAtMs, origin });
    return { blob, uploadUrl, expiresAtMs };
  }

  /** The blob with a download URL; BlobNotUploaded before its bytes are in. */
  async get(account: string, id: string, origin: string): Promise<BlobView> {
    const blob = await this.uploaded(account, id, "blob");
    const expiresAtMs = this.deps.clock.nowMs() + limits.blobs.urlSeconds * 1000;
    const downloadUrl = await this.deps.storage.downloadUrl({ blobId: blob.id, contentType: blob.contentType, expiresAtMs, origin });
    return { blob, downloadUrl, expiresAtMs };
  }

  /**
   * The account's blob, uploaded; `what` names it in errors (`attachments.image`). A storage the
   * client uploads to directly (S3) is asked on first use, and the bytes measured then.
   */
  async uploaded(account: string, id: string, what: string): Promise<BlobView["blob"]> {
    if (!isBlobId(id)) fail("ValidationFailed", `${what}: ${JSON.stringify(id)} is not a blob id.`);
    const blob = await this.deps.store.blobGet({ account, id });
    if (!blob) fail("ResourceNotFound", `${what}: blob ${id} does not exist in this account.`);
    if (blob.uploadedAtMs !== undefined) return blob as BlobView["blob"];
    const facts = this.deps.storage.served ? undefined : await this.deps.storage.stat(id);
    if (!facts) fail("BlobNotUploaded", `${what}: blob ${id} has no bytes yet: PUT them to its uploadUrl first.`);
    if (facts.size > limits.blobs.maxBytes) fail("ValidationFailed", `${what}: blob ${id} is ${facts.size} bytes; at most ${limits.blobs.maxBytes} are allowed.`);
    const nowMs = this.deps.clock.nowMs();
    await this.deps.store.blobMarkUploaded({ id, size: facts.size, sha256: facts.sha256, nowMs, expiresAtMs: nowMs + limits.blobs.unreferencedSeconds * 1000 });
    return (await this.deps.store.blobGet({ account, id })) as BlobView["blob"];
  }

  /**
   * An attachments map (`field`) checked whole before anything is written: each name valid, each
   * blob the account's and uploaded (every fault a ValidationFailed naming `field.name`).
   */
  async resolve(account: string, field: string, map: unknown): Promise<Array<[string, BlobView["blob"]]>> {
    const entries = checkAttachmentMap(field, map);
    const out: Array<[string, BlobView["blob"]]> = [];
    for (const [name, id] of entries) {
      const what = `${field}.${name}`;
      try {
        out.push([name, await this.uploaded(account, id, what)]);
      } catch (err) {
        // A bad reference is a fault of the request's body, whatever the blob's state.
        if (err instanceof SluiceError && (err.code === "ResourceNotFound" || err.code === "BlobNotUploaded")) fail("ValidationFailed", err.message);
        throw err;
      }
    }
    return out;
  }

  /**
   * Attaches resolved blobs to `jobId`, all or none. A blob held by another job is refused, unless
   * `isReplay` says that job is the one this request replays (then nothing is attached: the
   * replay answers that job). Answers the job's attachments JSON and the ids attached.
   */
  async attach(p: { account: string; field: string; blobs: ReadonlyArray<[string, BlobRecord]>; jobId: string; isReplay?: (jobId: string) => Promise<boolean> }): Promise<{ json: string; attachedIds: string[] }> {
    const json = attachmentsJsonOf(p.blobs);
    const ids: string[] = [];
    for (const [name, blob] of p.blobs) {
      if (blob.jobId === undefined) ids.push(blob.id);
      else if (blob.jobId !== p.jobId) {
        if (p.isReplay && (await p.isReplay(blob.jobId))) return { json, attachedIds: [] };
        fail("ValidationFailed", `${p.field}.${name}: blob ${blob.id} is attached to job ${blob.jobId} already; upload the bytes again to attach them to another job.`);
      }
    }
    if (ids.length === 0) return { json, attachedIds: [] };
    const checkAtMs = this.deps.clock.nowMs() + limits.blobs.attachCheckSeconds * 1000;
    if (!(await this.deps.store.blobAttach({ account: p.account, ids, jobId: p.jobId, checkAtMs }))) {
      fail("ValidationFailed", `${p.field}: a blob was attached to another job or deleted meanwhile; nothing was attached.`);
    }
    return { json, attachedIds: ids };
  }

  /** Gives back what attach attached when the submit or complete it was for did not happen. */
  async detach(ids: readonly string[], jobId: string): Promise<void> {
    if (ids.length === 0) return;
    await this.deps.store.blobDetach({ ids, jobId, expiresAtMs: this.deps.clock.nowMs() + limits.blobs.unreferencedSeconds * 1000 });
  }

  /** A PUT to an upload URL this server made (fs): checked, streamed to storage, then marked uploaded. */
  async receive(p: { blobId: string; expiresAtMs: number; signature: string; declaredBytes?: number; body: AsyncIterable<Uint8Array> }): Promise<BlobView["blob"]> {
    const served = this.servedOrFail();
    const blob = await this.signed(served, "upload", p);
    if (blob.uploadedAtMs !== undefined) fail("ValidationFailed", `Blob ${blob.id} is uploaded already; make another blob for other bytes.`);
    if (p.declaredBytes !== undefined && p.declaredBytes > limits.blobs.maxBytes) fail("MessageTooLong", `The body is ${p.declaredBytes} bytes; a blob is at most ${limits.blobs.maxBytes}.`);
    const facts = await served.write(blob.id, p.body, limits.blobs.maxBytes);
    const nowMs = this.deps.clock.nowMs();
    const marked = await this.deps.store.blobMarkUploaded({ id: blob.id, size: facts.size, sha256: facts.sha256, nowMs, expiresAtMs: nowMs + limits.blobs.unreferencedSeconds * 1000 });
    if (!marked) fail("ValidationFailed", `Blob ${blob.id} was uploaded by another request meanwhile.`);
    return (await this.deps.store.blobGet({ account: blob.account, id: blob.id })) as BlobView["blob"];
  }

  /** A GET of a download URL this server made (fs): the record and its bytes as a stream. */
  async open(p: { blobId: string; expiresAtMs: number; signature: string }): Promise<{ blob: BlobView["blob"]; bytes: AsyncIterable<Uint8Array> }> {
    const served = this.servedOrFail();
    const blob = await this.signed(served, "download", p);
    if (blob.uploadedAtMs === undefined) fail("BlobNotUploaded", `Blob ${blob.id} has no bytes yet.`);
    return { blob: blob as BlobView["blob"], bytes: served.read(blob.id) };
  }

  /** Download URLs for a job's attachments (inputs and outputs), by blob id, valid until `expiresAtMs`. */
  async downloadUrls(job: JobRecord, origin: string, expiresAtMs: number): Promise<Map<string, string>> {
    const urls = new Map<string, string>();
    for (const json of [job.attachmentsJson, job.outputAttachmentsJson]) {
      if (json === undefined) continue;
      for (const a of Object.values(parseAttachments(json))) urls.set(a.blobId, await this.deps.storage.downloadUrl({ blobId: a.blobId, contentType: a.contentType, expiresAtMs, origin }));
    }
    return urls;
  }

  /**
   * One pass of the sweep: blobs due now are deleted (bytes first, then the record), unless a job
   * holds them (checked once after an attach), then kept. Answers how many it deleted, and
   * whether the slice was full (more may be due).
   */
  async sweep(): Promise<{ deleted: number; full: boolean }> {
    const due = await this.deps.store.blobListDue({ nowMs: this.deps.clock.nowMs(), limit: limits.blobs.sweepSlice });
    let deleted = 0;
    for (const blob of due) {
      if (blob.jobId !== undefined && (await this.deps.store.jobGet({ id: blob.jobId }))) {
        await this.deps.store.blobKeep({ id: blob.id });
        continue;
      }
      await this.deps.storage.delete(blob.id);
      if (await this.deps.store.blobDelete({ id: blob.id })) deleted++;
    }
    return { deleted, full: due.length >= limits.blobs.sweepSlice };
  }

  private servedOrFail(): NonNullable<BlobStorage["served"]> {
    const served = this.deps.storage.served;
    if (!served) fail("RouteNotFound", "This server's blob storage is not served by Sluice: use the URLs it answered.");
    return served;
  }

  private async signed(served: NonNullable<BlobStorage["served"]>, op: "upload" | "download", p: { blobId: string; expiresAtMs: number; signature: string }): Promise<BlobRecord> {
    if (!served.verify(op, p.blobId, p.expiresAtMs, p.signature)) fail("AccessDenied", `The ${op} URL's signature is not valid: use the URL as the server answered it.`);
    // A signed id is one this server made: which account it is in does not matter here. Gone
    // is said before expired: asking again for a URL would not bring it back.
    const blob = await this.blobAnyAccount(p.blobId);
    if (!blob) fail("ResourceNotFound", `Blob ${p.blobId} does not exist (it expired unreferenced, or its job was pruned).`);
    if (this.deps.clock.nowMs() > p.expiresAtMs) fail("AccessDenied", `The ${op} URL expired at ${new Date(p.expiresAtMs).toISOString()}: ask for a new one.`);
    return blob;
  }

  private async blobAnyAccount(id: string): Promise<BlobRecord | undefined> {
    return this.deps.store.blobGet({ id });
  }

  private async checkQuota(account: string): Promise<void> {
    const max = this.deps.maxBlobBytesOf?.(account);
    if (max === undefined) return;
    const held = await this.deps.store.blobBytes({ account });
    if (held >= max) {
      this.deps.onQuotaRefused?.(account);
      fail("OverLimit", `The account stores ${held} bytes of attachments; its quota is ${max}. Let jobs be pruned or their blobs expire, then upload again.`);
    }
  }
}
