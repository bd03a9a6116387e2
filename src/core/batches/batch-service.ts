/**
 * Batches in core: create, read, list and cancel them, and move each along (the runner calls
 * advance): validate the input file, make its lines jobs slice by slice, follow the jobs to their
 * end, then write the output and error files. Every step is a compare-and-set on the batch's
 * version (batch-store.ts), so it resumes after a restart and any node may take the next step.
 */
import type { Clock } from "../clock.js";
import { SluiceError, fail } from "../errors.js";
import type { IdSource } from "../ids.js";
import type { JobCreateItem, JobCreateResult } from "../job-store.js";
import type { KeyedSubmits } from "../jobs/job-submissions.js";
import { limits } from "../limits.js";
import { validateQueueName } from "../queue.js";
import { type BatchLineError, type BatchRecord, isBatchDone } from "./batch.js";
import { checkBatchLine } from "./batch-lines.js";
import type { BatchStore } from "./batch-store.js";
import { finalizeBatch } from "./batch-finalize.js";
import type { FileService } from "./file-service.js";
import { jsonlLines } from "./jsonl-lines.js";

/** What batches need of the jobs layer. */
export interface BatchJobs {
  keyedItems(p: KeyedSubmits): Promise<JobCreateItem[]>;
  announceCreated(results: readonly JobCreateResult[]): void;
  /** Cancels the job (a running one: cancel requested); one already finished is left be. */
  cancel(account: string, id: string): Promise<void>;
}

export interface BatchCreateInput {
  input_file_id: string;
  endpoint: string;
  completion_window: string;
  metadata?: Record<string, string> | null;
}

export interface BatchServiceDeps {
  store: BatchStore;
  files: FileService;
  jobs: BatchJobs;
  clock: Clock;
  ids: IdSource;
  /** A batch's step failed (its queue deleted meanwhile, say): it stays where it was and is tried again on the next pass. */
  onAdvanceError?: (err: unknown, batch: BatchRecord) => void;
}

const endpointPattern = /^\/v1\/[A-Za-z0-9/_.-]{1,200}$/;

export class BatchService {
  private readonly store: BatchStore;
  private readonly clock: Clock;
  private readonly changeListeners = new Set<() => void>();

  constructor(private readonly deps: BatchServiceDeps) {
    this.store = deps.store;
    this.clock = deps.clock;
  }

  /** Told when a batch was created or canceled: the runner looks at once. */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  async create(account: string, input: BatchCreateInput): Promise<BatchRecord> {
    const b = limits.batches;
    if (input.completion_window !== "24h") fail("ValidationFailed", 'completion_window must be "24h".');
    if (!endpointPattern.test(input.endpoint)) fail("ValidationFailed", `endpoint must be a path under /v1/ (such as /v1/chat/completions), got ${JSON.stringify(input.endpoint)}.`);
    const metadata = input.metadata ?? undefined;
    if (metadata !== undefined) {
      const entries = Object.entries(metadata);
      if (entries.length > b.metadataMaxPairs) fail("ValidationFailed", `metadata has over ${b.metadataMaxPairs} pairs.`);
      for (const [k, v] of entries) {
        if (k.length > b.metadataKeyMaxLength || typeof v !== "string" || v.length > b.metadataValueMaxLength) {
          fail("ValidationFailed", `metadata.${k} must be a string of at most ${b.metadataValueMaxLength} characters (keys at most ${b.metadataKeyMaxLength}).`);
        }
      }
    }
    const queueName = metadata?.queue ?? "batch";
    validateQueueName(queueName, false);
    const file = await this.store.fileGet({ account, id: input.input_file_id });
    if (!file || file.status !== "processed") throw new SluiceError("ResourceNotFound", `File ${input.input_file_id} does not exist.`);
    if (file.purpose !== "batch") fail("ValidationFailed", `File ${file.id} has purpose ${file.purpose}, not batch.`);
    const nowMs = this.clock.nowMs();
    const batch: BatchRecord = {
      id: `batch_${this.deps.ids.messageId().replace(/-/g, "")}`,
      version: 1,
      endpoint: input.endpoint,
      inputFileId: file.id,
      completionWindow: input.completion_window,
      queueName,
      status: "validating",
      submittedLines: 0,
      counts: { total: 0, completed: 0, failed: 0 },
      createdAtMs: nowMs,
      expiresAtMs: nowMs + b.completionWindowSeconds * 1000,
    };
    if (account !== "") batch.account = account;
    if (metadata !== undefined) batch.metadata = metadata;
    await this.store.batchCreate({ batch });
    this.changed();
    return batch;
  }

  async get(account: string, id: string): Promise<BatchRecord> {
    const batch = await this.store.batchGet({ account, id });
    if (!batch) throw new SluiceError("ResourceNotFound", `Batch ${id} does not exist.`);
    return batch;
  }

  async list(account: string, p: { after?: string; limit?: number }): Promise<{ batches: BatchRecord[]; hasMore: boolean }> {
    const limit = p.limit ?? limits.batches.listDefault;
    const rows = await this.store.batchList({ account, ...(p.after === undefined ? {} : { afterId: p.after }), limit: limit + 1 });
    return { batches: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  /** validating or in_progress → cancelling (its live jobs are canceled, then it finalizes as cancelled); cancelling: as it is. */
  async cancel(account: string, id: string): Promise<BatchRecord> {
    for (;;) {
      const batch = await this.get(account, id);
      if (batch.status === "cancelling" || batch.status === "cancelled") return batch;
      if (isBatchDone(batch.status) || batch.status === "finalizing") fail("JobAlreadyFinished", `Batch ${id} is ${batch.status}: it can no longer be cancelled.`);
      const next: BatchRecord = { ...batch, version: batch.version + 1, status: "cancelling", cancellingAtMs: this.clock.nowMs(), ending: "cancel", endingSwept: false };
      if (await this.store.batchWrite({ batch: next, expectedVersion: batch.version })) {
        this.changed();
        return next;
      }
    }
  }

  /** Every batch not done, one after another (what the runner's pass does). */
  async advanceAll(): Promise<void> {
    let afterId: string | undefined;
    for (;;) {
      const page = await this.store.batchListActive({ ...(afterId === undefined ? {} : { afterId }), limit: 100 });
      for (const batch of page) {
        // One batch's failure must not hold up the others.
        await this.advance(batch).catch((err: unknown) => {
          if (!this.deps.onAdvanceError) throw err;
          this.deps.onAdvanceError(err, batch);
        });
      }
      if (page.length < 100) return;
      afterId = page.at(-1)!.id;
    }
  }

  /** Takes the batch as far as it can go now. A lost compare-and-set ends the step: another node moved it, the next pass goes on. */
  async advance(start: BatchRecord): Promise<void> {
    let batch: BatchRecord | undefined = start;
    const nowMs = this.clock.nowMs();
    if (!batch.ending && nowMs >= batch.expiresAtMs && (batch.status === "validating" || batch.status === "in_progress")) {
      batch = await this.write(batch, { ending: "expire", endingSwept: false });
    }
    if (batch?.status === "validating" && !batch.ending) batch = await this.validate(batch);
    if (batch?.status === "validating" && batch.ending) batch = await this.write(batch, { status: batch.ending === "cancel" ? "cancelling" : "in_progress", validated: true, submitted: true });
    if (batch?.status === "in_progress" && !batch.submitted && !batch.ending) batch = await this.submit(batch);
    if (batch?.status === "in_progress" || batch?.status === "cancelling") batch = await this.follow(batch);
    if (batch?.status === "finalizing") await finalizeBatch({ store: this.store, files: this.deps.files, clock: this.clock }, batch);
  }

  /** Reads the whole input file once: any bad line fails the batch, as OpenAI's validation does; else in_progress. */
  private async validate(batch: BatchRecord): Promise<BatchRecord | undefined> {
    const file = await this.store.fileGet({ account: batch.account ?? "", id: batch.inputFileId });
    if (!file || file.status !== "processed") return this.write(batch, { status: "failed", failedAtMs: this.clock.nowMs(), errors: [{ code: "file_not_found", message: `The input file ${batch.inputFileId} was deleted.` }] });
    const errors: BatchLineError[] = [];
    let errorCount = 0;
    let requests = 0;
    const seen = new Set<string>();
    for await (const l of jsonlLines(this.deps.files.content(file), limits.batches.lineMaxBytes)) {
      const checked = checkBatchLine(l, batch.endpoint, seen);
      if ("blank" in checked) continue;
      if ("error" in checked) {
        errorCount++;
        if (errors.length < limits.batches.errorsShown) errors.push(checked.error);
        continue;
      }
      requests++;
    }
    if (errorCount > errors.length) errors.push({ code: "too_many_errors", message: `${errorCount - errors.length} more lines have errors.` });
    if (errors.length === 0 && requests === 0) errors.push({ code: "empty_file", message: "The input file has no requests." });
    const nowMs = this.clock.nowMs();
    if (errors.length > 0) return this.write(batch, { status: "failed", failedAtMs: nowMs, errors });
    return this.write(batch, { status: "in_progress", inProgressAtMs: nowMs, validated: true, counts: { total: requests, completed: 0, failed: 0 } });
  }

  /** Makes the lines after submittedLines jobs, a slice per write (each write moves submittedLines on with its jobs). */
  private async submit(start: BatchRecord): Promise<BatchRecord | undefined> {
    let batch = start;
    const account = batch.account ?? "";
    const file = await this.store.fileGet({ account, id: batch.inputFileId });
    if (!file) return this.write(batch, { submitted: true });
    const seen = new Set<string>();
    let keys: string[] = [];
    let inputs: string[] = [];
    let lines: Array<{ line: number; customId: string }> = [];
    let lastLine = batch.submittedLines;
    const flush = async (): Promise<boolean> => {
      const nowMs = this.clock.nowMs();
      const items = keys.length === 0 ? [] : await this.deps.jobs.keyedItems({ account, queueName: batch.queueName, optionsJson: "{}", inputJson: "null", inputsJson: inputs, keys, nowMs });
      const next: BatchRecord = { ...batch, version: batch.version + 1, submittedLines: lastLine };
      const r = await this.store.batchSubmit({ batch: next, expectedVersion: batch.version, items, lines, nowMs });
      if (!r.written) return false;
      this.deps.jobs.announceCreated(r.results);
      batch = next;
      keys = [];
      inputs = [];
      lines = [];
      return true;
    };
    for await (const l of jsonlLines(this.deps.files.content(file), limits.batches.lineMaxBytes)) {
      const checked = checkBatchLine(l, batch.endpoint, seen);
      if (l.line <= batch.submittedLines || !("customId" in checked)) continue;
      keys.push(`${batch.id}:${l.line}`);
      inputs.push(checked.inputJson);
      lines.push({ line: l.line, customId: checked.customId });
      lastLine = l.line;
      if (keys.length >= limits.batches.submitSliceLines && !(await flush())) return undefined;
    }
    if ((keys.length > 0 || lastLine > batch.submittedLines) && !(await flush())) return undefined;
    return this.write(batch, { submitted: true });
  }

  /** Counts its jobs' ends; ending: cancels the live ones first. Every job done → finalizing. */
  private async follow(start: BatchRecord): Promise<BatchRecord | undefined> {
    let batch: BatchRecord | undefined = start;
    const account = start.account ?? "";
    if (batch.ending && !batch.endingSwept) {
      let afterLine = 0;
      for (;;) {
        const rows = await this.store.batchJobRows({ batchId: batch.id, afterLine, limit: limits.batches.resultSliceLines, liveOnly: true });
        for (const row of rows) await this.deps.jobs.cancel(account, row.jobId);
        if (rows.length < limits.batches.resultSliceLines) break;
        afterLine = rows.at(-1)!.line;
      }
      batch = await this.write(batch, { endingSwept: true });
      if (!batch) return undefined;
    }
    const byStatus = await this.store.batchJobCounts({ batchId: batch.id });
    const n = (s: string): number => byStatus[s] ?? 0;
    const counts = { total: batch.counts.total, completed: n("succeeded"), failed: n("failed") + n("canceled") + n("missing") };
    const live = n("queued") + n("running") + n("waiting");
    const done = live === 0 && (batch.submitted === true || batch.ending !== undefined);
    if (done) return this.write(batch, { counts, status: "finalizing", finalizingAtMs: this.clock.nowMs() });
    if (counts.completed !== batch.counts.completed || counts.failed !== batch.counts.failed) return this.write(batch, { counts });
    return batch;
  }

  /** The batch with `patch`, written if nobody wrote since it was read; undefined when somebody did. */
  private async write(batch: BatchRecord, patch: Partial<BatchRecord>): Promise<BatchRecord | undefined> {
    const next: BatchRecord = { ...batch, ...patch, version: batch.version + 1 };
    return (await this.store.batchWrite({ batch: next, expectedVersion: batch.version })) ? next : undefined;
  }

  private changed(): void {
    for (const listener of this.changeListeners) listener();
  }
}
