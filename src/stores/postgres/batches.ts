/**
 * Files and batches in PostgreSQL: a file's bytes in 1 MiB rows of file_chunks that every node
 * reads, records as JSON, every batch write a compare-and-set on its version (`UPDATE … WHERE
 * version = $n`): of nodes racing to move a batch one writes, the others change nothing. A slice
 * of a batch's jobs, its lines and the batch's update are one transaction.
 */
import type { BatchJobRow, BatchRecord, FileRecord } from "../../core/batches/batch.js";
import { isBatchDone } from "../../core/batches/batch.js";
import type { BatchStore } from "../../core/batches/batch-store.js";
import type { JobCreateItem, JobCreateResult } from "../../core/job-store.js";
import { type BatchJobRowOut, batchJobCountsOf, toBatchJobRow } from "../codecs/batch-job-row.js";
import type { Db, Queryable } from "./db.js";
import { queueMustExist } from "./rows.js";
import type { CreateJobsInTx } from "./schedules.js";

const parseBatch = (r: { record: string }): BatchRecord => JSON.parse(r.record) as BatchRecord;
const rowsSelect = "SELECT b.line, b.custom_id, b.job_id, j.status, j.output, j.error FROM batch_jobs b LEFT JOIN jobs j ON j.id = b.job_id WHERE b.batch_id = $1 AND b.line > $2";

async function writeIn(q: Queryable, batch: BatchRecord, expectedVersion: number): Promise<boolean> {
  const r = await q.query("UPDATE batches SET version = $2, active = $3, record = $4 WHERE id = $1 AND version = $5", [
    batch.id,
    batch.version,
    !isBatchDone(batch.status),
    JSON.stringify(batch),
    expectedVersion,
  ]);
  return (r.rowCount ?? 0) > 0;
}

export class PostgresBatches implements BatchStore {
  constructor(
    private readonly db: Db,
    private readonly createJobs: CreateJobsInTx,
  ) {}

  async fileCreate(p: { file: FileRecord }): Promise<void> {
    await this.db.query("INSERT INTO files (id, account, record) VALUES ($1, $2, $3)", [p.file.id, p.file.account ?? "", JSON.stringify(p.file)]);
  }

  async fileChunkWrite(p: { fileId: string; index: number; data: Uint8Array }): Promise<void> {
    const data = Buffer.from(p.data.buffer, p.data.byteOffset, p.data.byteLength);
    await this.db.query("INSERT INTO file_chunks (file_id, idx, data) VALUES ($1, $2, $3) ON CONFLICT (file_id, idx) DO UPDATE SET data = excluded.data", [p.fileId, p.index, data]);
  }

  async fileUpdate(p: { file: FileRecord }): Promise<void> {
    await this.db.query("UPDATE files SET record = $2 WHERE id = $1", [p.file.id, JSON.stringify(p.file)]);
  }

  async fileGet(p: { account?: string; id: string }): Promise<FileRecord | undefined> {
    const { rows } = await this.db.query<{ record: string }>("SELECT record FROM files WHERE id = $1 AND account = $2", [p.id, p.account ?? ""]);
    return rows[0] ? (JSON.parse(rows[0].record) as FileRecord) : undefined;
  }

  async fileChunkRead(p: { fileId: string; fromIndex: number; limit: number }): Promise<Uint8Array[]> {
    const { rows } = await this.db.query<{ data: Buffer }>("SELECT data FROM file_chunks WHERE file_id = $1 AND idx >= $2 ORDER BY idx LIMIT $3", [p.fileId, p.fromIndex, p.limit]);
    return rows.map((r) => new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength));
  }

  async fileDelete(p: { account?: string; id: string }): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const r = await tx.query("DELETE FROM files WHERE id = $1 AND account = $2", [p.id, p.account ?? ""]);
      if ((r.rowCount ?? 0) === 0) return false;
      await tx.query("DELETE FROM file_chunks WHERE file_id = $1", [p.id]);
      return true;
    });
  }

  async batchCreate(p: { batch: BatchRecord }): Promise<void> {
    const b = p.batch;
    await this.db.query("INSERT INTO batches (id, account, version, active, record) VALUES ($1, $2, $3, $4, $5)", [b.id, b.account ?? "", b.version, !isBatchDone(b.status), JSON.stringify(b)]);
  }

  async batchGet(p: { account?: string; id: string }): Promise<BatchRecord | undefined> {
    const { rows } = await this.db.query<{ record: string }>("SELECT record FROM batches WHERE id = $1 AND account = $2", [p.id, p.account ?? ""]);
    return rows[0] ? parseBatch(rows[0]) : undefined;
  }

  async batchList(p: { account?: string; afterId?: string; limit: number }): Promise<BatchRecord[]> {
    const { rows } = await this.db.query<{ record: string }>(
      "SELECT record FROM batches WHERE account = $1 AND seq < coalesce((SELECT seq FROM batches WHERE id = $2 AND account = $1), 9223372036854775807) ORDER BY seq DESC LIMIT $3",
      [p.account ?? "", p.afterId ?? "", p.limit],
    );
    return rows.map(parseBatch);
  }

  batchWrite(p: { batch: BatchRecord; expectedVersion: number }): Promise<boolean> {
    return writeIn(this.db, p.batch, p.expectedVersion);
  }

  async batchListActive(p: { afterId?: string; limit: number }): Promise<BatchRecord[]> {
    const { rows } = await this.db.query<{ record: string }>(
      "SELECT record FROM batches WHERE active AND seq > coalesce((SELECT seq FROM batches WHERE id = $1), 0) ORDER BY seq LIMIT $2",
      [p.afterId ?? "", p.limit],
    );
    return rows.map(parseBatch);
  }

  async batchSubmit(p: { batch: BatchRecord; expectedVersion: number; items: JobCreateItem[]; lines: Array<{ line: number; customId: string }>; nowMs: number }): Promise<{ written: false } | { written: true; results: JobCreateResult[] }> {
    return queueMustExist(p.items[0]?.job.queueName ?? "", () =>
      this.db.transaction(async (tx) => {
        // The row lock this update takes makes a racing node's update wait, then find the version moved.
        if (!(await writeIn(tx, p.batch, p.expectedVersion))) return { written: false as const };
        const results = p.items.length === 0 ? [] : await this.createJobs(tx, p.items, p.nowMs);
        if (results.length > 0) {
          await tx.query(
            "INSERT INTO batch_jobs (batch_id, line, custom_id, job_id) SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[]) ON CONFLICT (batch_id, line) DO NOTHING",
            [p.batch.id, results.map((_, i) => p.lines[i]!.line), results.map((_, i) => p.lines[i]!.customId), results.map((r) => r.job.id)],
          );
        }
        return { written: true as const, results };
      }),
    );
  }

  async batchJobCounts(p: { batchId: string }): Promise<Record<string, number>> {
    const { rows } = await this.db.query<{ status: string | null; n: number }>(
      "SELECT j.status, count(*)::int AS n FROM batch_jobs b LEFT JOIN jobs j ON j.id = b.job_id WHERE b.batch_id = $1 GROUP BY j.status",
      [p.batchId],
    );
    return batchJobCountsOf(rows);
  }

  async batchJobRows(p: { batchId: string; afterLine: number; limit: number; liveOnly?: boolean }): Promise<BatchJobRow[]> {
    const live = p.liveOnly ? " AND j.status IN ('queued', 'running', 'waiting')" : "";
    const { rows } = await this.db.query<BatchJobRowOut>(`${rowsSelect}${live} ORDER BY b.line LIMIT $3`, [p.batchId, p.afterLine, p.limit]);
    return rows.map(toBatchJobRow);
  }
}
