/** The `blobs` table's rows, as both stores read them, and their mapping to core's BlobRecord. */
import type { BlobRecord } from "../../core/blobs/blob.js";

export interface BlobRow {
  id: string;
  account: string;
  content_type: string;
  created_at_ms: number | string;
  uploaded_at_ms: number | string | null;
  /** PostgreSQL's bigint arrives as text. */
  size: number | string | null;
  sha256: string | null;
  job_id: string | null;
  expires_at_ms: number | string | null;
}

export const blobColumns = "id, account, content_type, created_at_ms, uploaded_at_ms, size, sha256, job_id, expires_at_ms";

const num = (v: number | string | null): number | undefined => (v === null ? undefined : Number(v));

export function toBlob(r: BlobRow): BlobRecord {
  const b: BlobRecord = { id: r.id, account: r.account, contentType: r.content_type, createdAtMs: Number(r.created_at_ms) };
  if (r.uploaded_at_ms !== null) b.uploadedAtMs = Number(r.uploaded_at_ms);
  if (r.size !== null) b.size = num(r.size);
  if (r.sha256 !== null) b.sha256 = r.sha256;
  if (r.job_id !== null) b.jobId = r.job_id;
  if (r.expires_at_ms !== null) b.expiresAtMs = num(r.expires_at_ms);
  return b;
}
