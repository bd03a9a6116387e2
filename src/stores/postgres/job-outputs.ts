/**
 * Streamed output in PostgreSQL (JobStore.jobOutputAppend / jobOutputRead): one job_outputs row
 * per accepted request, and its job.output event appended in the same transaction, under the
 * job's row lock so two requests of one attempt take consecutive indexes.
 */
import { fail } from "../../core/errors.js";
import { outputColumnJson } from "../../core/job-event-log.js";
import type { JobChange, JobOutputStore } from "../../core/job-store.js";
import { requireLiveLease } from "../../core/jobs/transitions.js";
import { chunksFrom, outputLimits } from "../../core/jobs/output-chunks.js";
import type { Db } from "./db.js";
import { appendEvents } from "./event-log.js";
import { type JobRow, toJob } from "../codecs/job-row.js";

export class PostgresJobOutputs implements JobOutputStore {
  constructor(private readonly db: Db) {}

  jobOutputAppend(p: { id: string; leaseToken: string; nowMs: number; chunksJson: string; count: number }): Promise<{ change: JobChange; index: number; total: number }> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<JobRow>("SELECT * FROM jobs WHERE id = $1 FOR UPDATE", [p.id]);
      if (!rows[0]) fail("JobNotFound", `Job ${p.id} does not exist.`);
      const job = toJob(rows[0]);
      requireLiveLease(job, p.leaseToken, p.nowMs);
      // The last row's end, found through the key: max() over the attempt would read every row.
      const total = await tx.query<{ n: number }>("SELECT first_index + count AS n FROM job_outputs WHERE job_id = $1 AND attempt = $2 ORDER BY first_index DESC LIMIT 1", [p.id, job.attempt]);
      const index = total.rows[0]?.n ?? 0;
      await tx.query("INSERT INTO job_outputs (job_id, attempt, first_index, count, chunks) VALUES ($1, $2, $3, $4, $5)", [p.id, job.attempt, index, p.count, p.chunksJson]);
      await appendEvents(tx, [{ job: { ...job, outputJson: outputColumnJson(index, p.chunksJson) }, events: ["job.output"] }], p.nowMs);
      return { change: { job, events: ["job.output"] }, index, total: index + p.count };
    });
  }

  async jobOutputRead(p: { id: string; fromIndex: number; limit: number }): Promise<{ attempt: number; chunksJson: string[]; total: number } | undefined> {
    const job = await this.db.query<{ attempt: number; total: number }>(
      "SELECT j.attempt, coalesce((SELECT o.first_index + o.count FROM job_outputs o WHERE o.job_id = j.id AND o.attempt = j.attempt ORDER BY o.first_index DESC LIMIT 1), 0) AS total FROM jobs j WHERE j.id = $1",
      [p.id],
    );
    if (!job.rows[0]) return undefined;
    const { attempt, total } = job.rows[0];
    // Each row holds at least one chunk: `limit` rows are enough for `limit` chunks. And at most
    // maxChunks, so the row holding the first index wanted starts after (from - maxChunks): a
    // range on the key, not a scan from the attempt's first row.
    const { rows } = await this.db.query<{ first_index: number; chunks: string }>(
      "SELECT first_index, chunks FROM job_outputs WHERE job_id = $1 AND attempt = $2 AND first_index > $3 AND first_index + count > $4 ORDER BY first_index LIMIT $5",
      [p.id, attempt, p.fromIndex - outputLimits.maxChunks, p.fromIndex, p.limit],
    );
    return { attempt, chunksJson: chunksFrom(rows.map((r) => ({ index: r.first_index, chunksJson: r.chunks })), p.fromIndex, p.limit), total };
  }
}
