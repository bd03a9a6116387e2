/**
 * Blob records in PostgreSQL (attachments; their bytes are the blob storage's, which every node
 * reaches: S3 for many nodes). An attach is one conditional UPDATE of all its blobs: all or none.
 */
import type { BlobRecord } from "../../core/blobs/blob.js";
import type { BlobStore } from "../../core/blobs/blob-store.js";
import { type BlobRow, blobColumns, toBlob } from "../codecs/blob-row.js";
import type { Db } from "./db.js";

const select = `SELECT ${blobColumns} FROM blobs`;

export class PostgresBlobs implements BlobStore {
  constructor(private readonly db: Db) {}

  async blobCreate(p: { blob: BlobRecord }): Promise<void> {
    const b = p.blob;
    await this.db.query("INSERT INTO blobs (id, account, content_type, created_at_ms, expires_at_ms) VALUES ($1, $2, $3, $4, $5)", [b.id, b.account, b.contentType, b.createdAtMs, b.expiresAtMs ?? null]);
  }

  async blobGet(p: { account?: string; id: string }): Promise<BlobRecord | undefined> {
    const { rows } = p.account === undefined ? await this.db.query<BlobRow>(`${select} WHERE id = $1`, [p.id]) : await this.db.query<BlobRow>(`${select} WHERE id = $1 AND account = $2`, [p.id, p.account]);
    return rows[0] === undefined ? undefined : toBlob(rows[0]);
  }

  async blobMarkUploaded(p: { id: string; size: number; sha256: string; nowMs: number; expiresAtMs: number }): Promise<boolean> {
    const r = await this.db.query(
      "UPDATE blobs SET size = $1, sha256 = $2, uploaded_at_ms = $3, expires_at_ms = CASE WHEN job_id IS NULL THEN $4 ELSE expires_at_ms END WHERE id = $5 AND uploaded_at_ms IS NULL",
      [p.size, p.sha256, p.nowMs, p.expiresAtMs, p.id],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async blobAttach(p: { account: string; ids: readonly string[]; jobId: string; checkAtMs: number }): Promise<boolean> {
    // One statement: it updates every blob it names or, if any of them is not free, none.
    const r = await this.db.query(
      `WITH wanted AS (SELECT id FROM blobs WHERE id = ANY ($1::text[]) AND account = $2 AND job_id IS NULL AND uploaded_at_ms IS NOT NULL FOR UPDATE)
       UPDATE blobs SET job_id = $3, expires_at_ms = $4 WHERE id IN (SELECT id FROM wanted) AND (SELECT count(*) FROM wanted) = $5`,
      [p.ids, p.account, p.jobId, p.checkAtMs, p.ids.length],
    );
    return (r.rowCount ?? 0) === p.ids.length;
  }

  async blobDetach(p: { ids: readonly string[]; jobId: string; expiresAtMs: number }): Promise<void> {
    await this.db.query("UPDATE blobs SET job_id = NULL, expires_at_ms = $1 WHERE id = ANY ($2::text[]) AND job_id = $3", [p.expiresAtMs, p.ids, p.jobId]);
  }

  async blobListDue(p: { nowMs: number; limit: number }): Promise<BlobRecord[]> {
    const { rows } = await this.db.query<BlobRow>(`${select} WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= $1 ORDER BY expires_at_ms LIMIT $2`, [p.nowMs, p.limit]);
    return rows.map(toBlob);
  }

  async blobKeep(p: { id: string }): Promise<void> {
    await this.db.query("UPDATE blobs SET expires_at_ms = NULL WHERE id = $1 AND job_id IS NOT NULL", [p.id]);
  }

  async blobDelete(p: { id: string }): Promise<boolean> {
    const r = await this.db.query("DELETE FROM blobs WHERE id = $1", [p.id]);
    return (r.rowCount ?? 0) > 0;
  }

  async blobBytes(p: { account: string }): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>("SELECT coalesce(sum(size), 0)::text AS n FROM blobs WHERE account = $1", [p.account]);
    return Number(rows[0]!.n);
  }
}
