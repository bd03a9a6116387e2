/**
 * Streamed output in SQLite (JobStore.jobOutputAppend / jobOutputRead): one job_outputs row per
 * accepted request, and its job.output event appended in the same write.
 */
import { boundLimit } from "./bound-limit.js";
import type Database from "better-sqlite3";
import { fail } from "../../core/errors.js";
import { eventSnapshotJson, outputColumnJson } from "../../core/job-event-log.js";
import type { JobChange, JobOutputStore } from "../../core/job-store.js";
import { requireLiveLease } from "../../core/jobs/transitions.js";
import { chunksFrom, outputLimits } from "../../core/jobs/output-chunks.js";
import type { SqliteEventLog } from "./event-log.js";
import type { GroupCommitter } from "./group-commit.js";
import type { JobTransitionWriter } from "./job-transition-writer.js";

interface OutputRow {
  first_index: number;
  chunks: string;
}

export class SqliteJobOutputs implements JobOutputStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly writes: GroupCommitter,
    private readonly writer: JobTransitionWriter,
    private readonly eventLog: SqliteEventLog,
  ) {
    this.sql = {
      // The last row's end, found through the key: max() over the attempt would read every row, and
      // an attempt streaming for minutes has thousands.
      total: db.prepare<[string, number], number>("SELECT first_index + count FROM job_outputs WHERE job_id = ? AND attempt = ? ORDER BY first_index DESC LIMIT 1").pluck(),
      insert: db.prepare<[string, number, number, number, string]>("INSERT INTO job_outputs (job_id, attempt, first_index, count, chunks) VALUES (?, ?, ?, ?, ?)"),
      attempt: db.prepare<[string], number>("SELECT attempt FROM jobs WHERE id = ?").pluck(),
      // Each row holds at least one chunk: `limit` rows are enough for `limit` chunks. And at most
      // maxChunks, so the row holding the first index wanted starts after (from - maxChunks): a
      // range on the key, not a scan from the attempt's first row.
      from: db.prepare<[string, number, number, number, number], OutputRow>(
        `SELECT first_index, chunks FROM job_outputs WHERE job_id = ? AND attempt = ? AND first_index > ? AND first_index + count > ? ORDER BY first_index ${boundLimit()}`,
      ),
    };
  }

  jobOutputAppend(p: { id: string; leaseToken: string; nowMs: number; chunksJson: string; count: number }): Promise<{ change: JobChange; index: number; total: number }> {
    return this.writes.run(() => {
      const job = this.writer.findJob(p.id);
      if (!job) fail("JobNotFound", `Job ${p.id} does not exist.`);
      requireLiveLease(job, p.leaseToken, p.nowMs);
      const index = this.sql.total.get(p.id, job.attempt) ?? 0;
      this.sql.insert.run(p.id, job.attempt, index, p.count, p.chunksJson);
      this.eventLog.appendOne({ ...job, outputJson: outputColumnJson(index, p.chunksJson) }, eventSnapshotJson(job), "job.output", p.nowMs);
      return { change: { job, events: ["job.output"] }, index, total: index + p.count };
    });
  }

  async jobOutputRead(p: { id: string; fromIndex: number; limit: number }): Promise<{ attempt: number; chunksJson: string[]; total: number } | undefined> {
    const attempt = this.sql.attempt.get(p.id);
    if (attempt === undefined) return undefined;
    const rows = this.sql.from.all(p.id, attempt, p.fromIndex - outputLimits.maxChunks, p.fromIndex, p.limit);
    const total = this.sql.total.get(p.id, attempt) ?? 0;
    return { attempt, chunksJson: chunksFrom(rows.map((r) => ({ index: r.first_index, chunksJson: r.chunks })), p.fromIndex, p.limit), total };
  }
}
