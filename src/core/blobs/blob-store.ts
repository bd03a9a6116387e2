/**
 * The store methods behind attachments (Store extends this): blob records only, one atomic write
 * each. The bytes are a BlobStorage's (blob-storage.ts). A job that references a blob holds it:
 * deleting the job (pruned, or with its queue) makes the blob due for the sweep in the same write.
 */
import type { BlobRecord } from "./blob.js";

export interface BlobStore {
  /** Records a new blob (not uploaded yet; its id unique). */
  blobCreate(p: { blob: BlobRecord }): Promise<void>;
  /** Any state; with `account` (as BlobRecord's), another account's blob is absent. */
  blobGet(p: { account?: string; id: string }): Promise<BlobRecord | undefined>;
  /** Marks it uploaded with its size and digest, due for the sweep at `expiresAtMs` unless attached first; false if it was uploaded already (nothing written). */
  blobMarkUploaded(p: { id: string; size: number; sha256: string; nowMs: number; expiresAtMs: number }): Promise<boolean>;
  /**
   * Attaches every one of `ids` (the account's, uploaded, attached to nothing) to `jobId`, all or
   * none: false when any of them is not so (nothing written). Each is due for a check at
   * `checkAtMs` (the sweep keeps it if the job exists then).
   */
  blobAttach(p: { account: string; ids: readonly string[]; jobId: string; checkAtMs: number }): Promise<boolean>;
  /** Undoes blobAttach for the blobs of `ids` still attached to `jobId`: unreferenced again, due at `expiresAtMs`. */
  blobDetach(p: { ids: readonly string[]; jobId: string; expiresAtMs: number }): Promise<void>;
  /** Blobs due by `nowMs`, earliest first, at most `limit`. */
  blobListDue(p: { nowMs: number; limit: number }): Promise<BlobRecord[]>;
  /** Keeps a blob whose job exists: due never again (its job's deletion makes it due). */
  blobKeep(p: { id: string }): Promise<void>;
  /** Deletes the record; true if it existed. */
  blobDelete(p: { id: string }): Promise<boolean>;
  /** Bytes of the account's uploaded blobs (its attachments' share of a stored-bytes quota). */
  blobBytes(p: { account: string }): Promise<number>;
}
