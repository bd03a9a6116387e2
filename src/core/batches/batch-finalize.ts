/**
 * A batch's last step: with every job ended, its output file (one line per succeeded job) and
 * error file (one per job failed, canceled or pruned) are written, streamed page by page from the
 * store, and the batch ends completed, cancelled or expired. A node holds the batch while it
 * writes (claimUntilMs); a node that loses the final compare-and-set deletes the files it wrote.
 */
import type { Clock } from "../clock.js";
import { limits } from "../limits.js";
import type { BatchJobRow, BatchRecord } from "./batch.js";
import type { BatchStore } from "./batch-store.js";
import { checkBatchLine } from "./batch-lines.js";
import type { FileService } from "./file-service.js";
import { jsonlLines } from "./jsonl-lines.js";

export async function finalizeBatch(deps: { store: BatchStore; files: FileService; clock: Clock }, start: BatchRecord): Promise<void> {
  const nowMs = deps.clock.nowMs();
  if (start.claimUntilMs !== undefined && start.claimUntilMs > nowMs) return;
  const claimed: BatchRecord = { ...start, version: start.version + 1, claimUntilMs: nowMs + limits.batches.claimMs };
  if (!(await deps.store.batchWrite({ batch: claimed, expectedVersion: start.version }))) return;
  const account = claimed.account ?? "";
  const rows = (want: (row: BatchJobRow) => boolean): AsyncGenerator<BatchJobRow> => batchRows(deps.store, claimed.id, want);
  const endingCode = claimed.ending === "expire" ? "batch_expired" : "batch_cancelled";
  let succeeded = 0;
  let failed = 0;
  async function* outputLines(): AsyncGenerator<string> {
    for await (const row of rows((r) => r.status === "succeeded")) {
      succeeded++;
      yield `{"id":${JSON.stringify(requestId(row))},"custom_id":${JSON.stringify(row.customId)},"response":{"status_code":200,"request_id":${JSON.stringify(row.jobId)},"body":${row.outputJson ?? "null"}},"error":null}`;
    }
  }
  async function* errorLines(): AsyncGenerator<string> {
    for await (const row of rows((r) => r.status !== "succeeded")) {
      failed++;
      const error = errorOf(row, endingCode);
      yield `{"id":${JSON.stringify(requestId(row))},"custom_id":${JSON.stringify(row.customId)},"response":null,"error":${JSON.stringify(error)}}`;
    }
    // Ended (canceled, expired) before every line was made a job: those lines end here too.
    if (claimed.ending === undefined || claimed.submitted === true || !claimed.validated) return;
    const input = await deps.store.fileGet({ account, id: claimed.inputFileId });
    if (!input || input.status !== "processed") return;
    const seen = new Set<string>();
    const error = JSON.stringify({ code: endingCode, message: "The batch ended before this line was made a job." });
    for await (const l of jsonlLines(deps.files.content(input), limits.batches.lineMaxBytes)) {
      const checked = checkBatchLine(l, claimed.endpoint, seen);
      if (l.line <= claimed.submittedLines || !("customId" in checked)) continue;
      failed++;
      yield `{"id":${JSON.stringify(`batch_req_${claimed.id.slice("batch_".length)}_${l.line}`)},"custom_id":${JSON.stringify(checked.customId)},"response":null,"error":${error}}`;
    }
  }
  const output = await deps.files.writeLines(account, { filename: `${claimed.id}_output.jsonl`, purpose: "batch_output", lines: outputLines() });
  const errors = await deps.files.writeLines(account, { filename: `${claimed.id}_error.jsonl`, purpose: "batch_output", lines: errorLines() });
  const endMs = deps.clock.nowMs();
  const final: BatchRecord = { ...claimed, version: claimed.version + 1, counts: { total: claimed.counts.total, completed: succeeded, failed } };
  delete final.claimUntilMs;
  if (claimed.ending === "cancel") Object.assign(final, { status: "cancelled", cancelledAtMs: endMs });
  else if (claimed.ending === "expire") Object.assign(final, { status: "expired", expiredAtMs: endMs });
  else Object.assign(final, { status: "completed", completedAtMs: endMs });
  if (succeeded > 0) final.outputFileId = output.id;
  if (failed > 0) final.errorFileId = errors.id;
  const written = await deps.store.batchWrite({ batch: final, expectedVersion: claimed.version });
  // An empty file is not named by the batch (OpenAI answers null): it goes, as do both if another node finished first.
  if (!written || succeeded === 0) await deps.store.fileDelete({ account, id: output.id });
  if (!written || failed === 0) await deps.store.fileDelete({ account, id: errors.id });
}

/** A line's request id in the result files: stable, from its job's id. */
function requestId(row: BatchJobRow): string {
  return `batch_req_${row.jobId.replace(/-/g, "")}`;
}

function errorOf(row: BatchJobRow, endingCode: string): { code: string; message: string } {
  if (row.status === undefined) return { code: "result_expired", message: `Job ${row.jobId}'s result was pruned or its queue deleted before the batch finished.` };
  if (row.status === "canceled") return { code: endingCode, message: `Job ${row.jobId} was canceled.` };
  const err = row.errorJson === undefined ? undefined : (JSON.parse(row.errorJson) as { message?: string; type?: string });
  return { code: err?.type ?? "job_failed", message: err?.message ?? `Job ${row.jobId} failed.` };
}

async function* batchRows(store: BatchStore, batchId: string, want: (row: BatchJobRow) => boolean): AsyncGenerator<BatchJobRow> {
  const slice = limits.batches.resultSliceLines;
  let afterLine = 0;
  for (;;) {
    const rows = await store.batchJobRows({ batchId, afterLine, limit: slice });
    for (const row of rows) if (want(row)) yield row;
    if (rows.length < slice) return;
    afterLine = rows.at(-1)!.line;
  }
}
