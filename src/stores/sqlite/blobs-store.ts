/**
 * Blob records in SQLite (attachments; their bytes are the blob storage's). Writes go through the
 * group committer; an attach is one write, all of its blobs or none.
 */
import type Database from "better-sqlite3";
import type { BlobRecord } from "../../core/blobs/blob.js";
import type { BlobStore } from "../../core/blobs/blob-store.js";
import { boundLimit } from "./bound-limit.js";
import type { GroupCommitter } from "./group-commit.js";
import { type BlobRow, blobColumns, toBlob } from "../codecs/blob-row.js";

export class SqliteBlobs implements BlobStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly writes: GroupCommitter,
  ) {
    const select = `SELECT ${blobColumns} FROM blobs`;
    this.sql = {
      insert: db.prepare<[string, string, string, number, number | null]>("INSERT INTO blobs (id, account, content_type, created_at_ms, expires_at_ms) VALUES (?, ?, ?, ?, ?)"),
      get: db.prepare<[string], BlobRow>(`${select} WHERE id = ?`),
      getInAccount: db.prepare<[string, string], BlobRow>(`${select} WHERE id = ? AND account = ?`),
      markUploaded: db.prepare<[number, string, number, number, string]>("UPDATE blobs SET size = ?, sha256 = ?, uploaded_at_ms = ?, expires_at_ms = CASE WHEN job_id IS NULL THEN ? ELSE expires_at_ms END WHERE id = ? AND uploaded_at_ms IS NULL"),
      attach: db.prepare<[string, number, string, string]>("UPDATE blobs SET job_id = ?, expires_at_ms = ? WHERE id = ? AND account = ? AND job_id IS NULL AND uploaded_at_ms IS NOT NULL"),
      detach: db.prepare<[number, string, string]>("UPDATE blobs SET job_id = NULL, expires_at_ms = ? WHERE id = ? AND job_id = ?"),
      due: db.prepare<[number, number], BlobRow>(`${select} WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= ? ORDER BY expires_at_ms ${boundLimit()}`),
      keep: db.prepare<[string]>("UPDATE blobs SET expires_at_ms = NULL WHERE id = ? AND job_id IS NOT NULL"),
      delete: db.prepare<[string]>("DELETE FROM blobs WHERE id = ?"),
      bytes: db.prepare<[string], number>("SELECT coalesce(sum(size), 0) FROM blobs WHERE account = ?").pluck(),
    };
  }

  async blobCreate(p: { blob: BlobRecord }): Promise<void> {
    const b = p.blob;
    await this.writes.run(() => this.sql.insert.run(b.id, b.account, b.contentType, b.createdAtMs, b.expiresAtMs ?? null));
  }

  async blobGet(p: { account?: string; id: string }): Promise<BlobRecord | undefined> {
    const row = p.account === undefined ? this.sql.get.get(p.id) : this.sql.getInAccount.get(p.id, p.account);
    return row === undefined ? undefined : toBlob(row);
  }

  async blobMarkUploaded(p: { id: string; size: number; sha256: string; nowMs: number; expiresAtMs: number }): Promise<boolean> {
    return this.writes.run(() => this.sql.markUploaded.run(p.size, p.sha256, p.nowMs, p.expiresAtMs, p.id).changes > 0);
  }

  async blobAttach(p: { account: string; ids: readonly string[]; jobId: string; checkAtMs: number }): Promise<boolean> {
    return this.writes.run(() => {
      let changed = 0;
      for (const id of p.ids) changed += this.sql.attach.run(p.jobId, p.checkAtMs, id, p.account).changes;
      // Not all of them: the write's savepoint takes the others back.
      if (changed !== p.ids.length) throw new AttachRefused();
      return true;
    }).catch((err: unknown) => {
      if (err instanceof AttachRefused) return false;
      throw err;
    });
  }

  async blobDetach(p: { ids: readonly string[]; jobId: string; expiresAtMs: number }): Promise<void> {
    await this.writes.run(() => {
      for (const id of p.ids) this.sql.detach.run(p.expiresAtMs, id, p.jobId);
    });
  }

  async blobListDue(p: { nowMs: number; limit: number }): Promise<BlobRecord[]> {
    return this.sql.due.all(p.nowMs, p.limit).map(toBlob);
  }

  async blobKeep(p: { id: string }): Promise<void> {
    await this.writes.run(() => this.sql.keep.run(p.id));
  }

  async blobDelete(p: { id: string }): Promise<boolean> {
    return this.writes.run(() => this.sql.delete.run(p.id).changes > 0);
  }

  async blobBytes(p: { account: string }): Promise<number> {
    return this.sql.bytes.get(p.account) ?? 0;
  }
}

class AttachRefused extends Error {}
