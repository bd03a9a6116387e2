/**
 * Files and batches in SQLite: a file's bytes in 1 MiB rows of file_chunks, records as JSON.
 * Writes go through the group committer; a slice of a batch's jobs, its lines and the batch's
 * compare-and-set are one write, so they commit together or not at all.
 */
import type Database from "better-sqlite3";
import type { BatchJobRow, BatchRecord, FileRecord } from "../../core/batches/batch.js";
import { isBatchDone } from "../../core/batches/batch.js";
import type { BatchStore } from "../../core/batches/batch-store.js";
import type { JobCreateItem, JobCreateResult } from "../../core/job-store.js";
import { type BatchJobRowOut, batchJobCountsOf, toBatchJobRow } from "../codecs/batch-job-row.js";
import { boundLimit } from "./bound-limit.js";
import type { GroupCommitter } from "./group-commit.js";
import type { CreateJobsInWrite } from "./schedules-store.js";

const parseBatch = (json: string): BatchRecord => JSON.parse(json) as BatchRecord;
const liveStatuses = "('queued', 'running', 'waiting')";

export class SqliteBatches implements BatchStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly writes: GroupCommitter,
    private readonly createJobs: CreateJobsInWrite,
  ) {
    const rowsSelect = "SELECT b.line, b.custom_id, b.job_id, j.status, j.output, j.error FROM batch_jobs b LEFT JOIN jobs j ON j.id = b.job_id WHERE b.batch_id = ? AND b.line > ?";
    this.sql = {
      fileInsert: db.prepare<[string, string, string]>("INSERT INTO files (id, account, record) VALUES (?, ?, ?)"),
      fileUpdate: db.prepare<[string, string]>("UPDATE files SET record = ? WHERE id = ?"),
      fileGet: db.prepare<[string, string], string>("SELECT record FROM files WHERE id = ? AND account = ?").pluck(),
      fileDelete: db.prepare<[string, string]>("DELETE FROM files WHERE id = ? AND account = ?"),
      chunksDelete: db.prepare<[string]>("DELETE FROM file_chunks WHERE file_id = ?"),
      chunkPut: db.prepare<[string, number, Uint8Array]>("INSERT OR REPLACE INTO file_chunks (file_id, idx, data) VALUES (?, ?, ?)"),
      chunkRead: db.prepare<[string, number, number], Buffer>(`SELECT data FROM file_chunks WHERE file_id = ? AND idx >= ? ORDER BY idx ${boundLimit()}`).pluck(),
      batchInsert: db.prepare<[string, string, number, number, string]>("INSERT INTO batches (id, account, version, active, record) VALUES (?, ?, ?, ?, ?)"),
      batchGet: db.prepare<[string, string], string>("SELECT record FROM batches WHERE id = ? AND account = ?").pluck(),
      batchList: db.prepare<[string, string, string, number], string>(
        `SELECT record FROM batches WHERE account = ? AND seq < coalesce((SELECT seq FROM batches WHERE id = ? AND account = ?), 9223372036854775807) ORDER BY seq DESC ${boundLimit()}`,
      ).pluck(),
      batchUpdate: db.prepare<[number, number, string, string, number]>("UPDATE batches SET version = ?, active = ?, record = ? WHERE id = ? AND version = ?"),
      batchActive: db.prepare<[string, number], string>(
        `SELECT record FROM batches WHERE active = 1 AND seq > coalesce((SELECT seq FROM batches WHERE id = ?), 0) ORDER BY seq ${boundLimit()}`,
      ).pluck(),
      lineInsert: db.prepare<[string, number, string, string]>("INSERT OR IGNORE INTO batch_jobs (batch_id, line, custom_id, job_id) VALUES (?, ?, ?, ?)"),
      counts: db.prepare<[string], { status: string | null; n: number }>(
        "SELECT j.status AS status, count(*) AS n FROM batch_jobs b LEFT JOIN jobs j ON j.id = b.job_id WHERE b.batch_id = ? GROUP BY j.status",
      ),
      rows: db.prepare<[string, number, number], BatchJobRowOut>(`${rowsSelect} ORDER BY b.line ${boundLimit()}`),
      liveRows: db.prepare<[string, number, number], BatchJobRowOut>(`${rowsSelect} AND j.status IN ${liveStatuses} ORDER BY b.line ${boundLimit()}`),
    };
  }

  async fileCreate(p: { file: FileRecord }): Promise<void> {
    await this.writes.run(() => this.sql.fileInsert.run(p.file.id, p.file.account ?? "", JSON.stringify(p.file)));
  }

  async fileChunkWrite(p: { fileId: string; index: number; data: Uint8Array }): Promise<void> {
    await this.writes.run(() => this.sql.chunkPut.run(p.fileId, p.index, p.data));
  }

  async fileUpdate(p: { file: FileRecord }): Promise<void> {
    await this.writes.run(() => this.sql.fileUpdate.run(JSON.stringify(p.file), p.file.id));
  }

  async fileGet(p: { account?: string; id: string }): Promise<FileRecord | undefined> {
    const json = this.sql.fileGet.get(p.id, p.account ?? "");
    return json === undefined ? undefined : (JSON.parse(json) as FileRecord);
  }

  async fileChunkRead(p: { fileId: string; fromIndex: number; limit: number }): Promise<Uint8Array[]> {
    // A read answers after a turn of the event loop: a reader going through a 200 MB file chunk
    // by chunk (validation, a download) leaves room for other requests between chunks.
    await new Promise((resolve) => setImmediate(resolve));
    return this.sql.chunkRead.all(p.fileId, p.fromIndex, p.limit).map((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
  }

  async fileDelete(p: { account?: string; id: string }): Promise<boolean> {
    return this.writes.run(() => {
      const gone = this.sql.fileDelete.run(p.id, p.account ?? "").changes > 0;
      if (gone) this.sql.chunksDelete.run(p.id);
      return gone;
    });
  }

  async batchCreate(p: { batch: BatchRecord }): Promise<void> {
    const b = p.batch;
    await this.writes.run(() => this.sql.batchInsert.run(b.id, b.account ?? "", b.version, isBatchDone(b.status) ? 0 : 1, JSON.stringify(b)));
  }

  async batchGet(p: { account?: string; id: string }): Promise<BatchRecord | undefined> {
    const json = this.sql.batchGet.get(p.id, p.account ?? "");
    return json === undefined ? undefined : parseBatch(json);
  }

  async batchList(p: { account?: string; afterId?: string; limit: number }): Promise<BatchRecord[]> {
    const account = p.account ?? "";
    return this.sql.batchList.all(account, p.afterId ?? "", account, p.limit).map(parseBatch);
  }

  async batchWrite(p: { batch: BatchRecord; expectedVersion: number }): Promise<boolean> {
    return this.writes.run(() => this.writeNow(p.batch, p.expectedVersion));
  }

  async batchListActive(p: { afterId?: string; limit: number }): Promise<BatchRecord[]> {
    return this.sql.batchActive.all(p.afterId ?? "", p.limit).map(parseBatch);
  }

  async batchSubmit(p: { batch: BatchRecord; expectedVersion: number; items: JobCreateItem[]; lines: Array<{ line: number; customId: string }>; nowMs: number }): Promise<{ written: false } | { written: true; results: JobCreateResult[] }> {
    return this.writes.run(() => {
      if (!this.writeNow(p.batch, p.expectedVersion)) return { written: false as const };
      // A failed create throws: the write's savepoint takes the batch's update back with it.
      const results = p.items.length === 0 ? [] : this.createJobs(p.items, p.nowMs);
      results.forEach((r, i) => this.sql.lineInsert.run(p.batch.id, p.lines[i]!.line, p.lines[i]!.customId, r.job.id));
      return { written: true as const, results };
    });
  }

  async batchJobCounts(p: { batchId: string }): Promise<Record<string, number>> {
    return batchJobCountsOf(this.sql.counts.all(p.batchId));
  }

  async batchJobRows(p: { batchId: string; afterLine: number; limit: number; liveOnly?: boolean }): Promise<BatchJobRow[]> {
    return (p.liveOnly ? this.sql.liveRows : this.sql.rows).all(p.batchId, p.afterLine, p.limit).map(toBatchJobRow);
  }

  private writeNow(batch: BatchRecord, expectedVersion: number): boolean {
    return this.sql.batchUpdate.run(batch.version, isBatchDone(batch.status) ? 0 : 1, JSON.stringify(batch), batch.id, expectedVersion).changes > 0;
  }
}
