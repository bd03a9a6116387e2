/**
 * Moving a blob's bytes: `POST /v1/blobs` for an upload URL, the bytes PUT there (presigned: no
 * Sluice credentials, streamed), `GET /v1/blobs/{id}` for the uploaded blob's facts and a fresh
 * download URL, and a download read as it arrives.
 */
import { SluiceApiError } from "./errors.js";
import { type HttpClient, isRetryable } from "./http.js";
import { pathSegment } from "./paths.js";
import { sleep } from "./timers.js";
import type { UploadPlan } from "./attachment-source.js";
import type { AttachmentInfo, BlobInfo, BlobUpload } from "./wire.js";

/** Statuses of a download URL that has expired or been revoked: a fresh one is asked for once. */
const staleUrlStatuses = new Set([400, 401, 403, 404, 410]);

export class BlobTransfer {
  constructor(
    private readonly http: HttpClient,
    /** Attempts for calls that are safe to repeat, the first included. */
    private readonly attempts: number,
  ) {}

  /** Uploads one body (POST /v1/blobs, then PUT) and answers the stored blob's facts. */
  async upload(plan: UploadPlan, signal?: AbortSignal): Promise<BlobInfo> {
    // Safe to repeat: a blob never referenced is dropped after a day.
    const created = await this.http.request<BlobUpload>("POST", "/v1/blobs", { body: { contentType: plan.contentType }, maxAttempts: this.attempts, signal });
    const { blobId, uploadUrl } = created.body;
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.http.fetchUrl("PUT", uploadUrl, { body: await plan.body(), headers: { "content-type": plan.contentType }, signal, headTimeoutMs: null });
        await res.text().catch(() => "");
        break;
      } catch (err) {
        if (!plan.replayable || !isRetryable(err) || attempt >= this.attempts) throw err;
        await sleep(this.http.timers, this.http.retryDelayMs(attempt, err), signal);
      }
    }
    return this.info(blobId, signal);
  }

  /** GET /v1/blobs/{id}: the blob's facts and a download URL valid until `expiresAt`. */
  async info(blobId: string, signal?: AbortSignal): Promise<BlobInfo> {
    const res = await this.http.request<BlobInfo>("GET", `/v1/blobs/${pathSegment(blobId)}`, { maxAttempts: this.attempts, signal });
    return res.body;
  }

  /**
   * The blob's bytes as they arrive. Uses the attachment's own download URL when it has one, and
   * asks for a fresh one when it has none or the server says it is no longer good.
   */
  async download(att: AttachmentInfo, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    if (att.downloadUrl) {
      try {
        return bodyOf(await this.http.fetchUrl("GET", att.downloadUrl, { signal }));
      } catch (err) {
        if (!(err instanceof SluiceApiError && staleUrlStatuses.has(err.status)) && !isRetryable(err)) throw err;
      }
    }
    const fresh = await this.info(att.blobId, signal);
    return bodyOf(await this.http.fetchUrl("GET", fresh.downloadUrl, { signal }));
  }
}

function bodyOf(res: Response): AsyncIterable<Uint8Array> {
  // for await, not getReader(): a FetchLike's body may be a WHATWG stream or a Node Readable.
  return (res.body ?? emptyBody()) as unknown as AsyncIterable<Uint8Array>;
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}
