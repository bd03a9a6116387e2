/**
 * The store methods behind files and batches (Store extends this). Plain data, one atomic write
 * each. File bytes live in the store in chunks, so every node on a shared database reads what
 * another stored; batch writes are compare-and-sets on the record's version, as schedules' are.
 */
import type { JobCreateItem, JobCreateResult } from "../job-store.js";
import type { BatchJobRow, BatchRecord, FileRecord } from "./batch.js";

export interface BatchStore {
  /** Records a new file (status uploading) before its chunks are written. */
  fileCreate(p: { file: FileRecord }): Promise<void>;
  /** Writes chunk `index` of the file (replacing one of that index). */
  fileChunkWrite(p: { fileId: string; index: number; data: Uint8Array }): Promise<void>;
  /** Replaces the record (its bytes, chunks, lines, status once the chunks are in). */
  fileUpdate(p: { file: FileRecord }): Promise<void>;
  /** Any status; `account` as FileRecord's ("" by default), another account's file is absent. */
  fileGet(p: { account?: string; id: string }): Promise<FileRecord | undefined>;
  /** Chunks `fromIndex`… in order, at most `limit`. */
  fileChunkRead(p: { fileId: string; fromIndex: number; limit: number }): Promise<Uint8Array[]>;
  /** Deletes the file and its chunks; true if it existed. */
  fileDelete(p: { account?: string; id: string }): Promise<boolean>;

  /** Records a new batch (its id unique). */
  batchCreate(p: { batch: BatchRecord }): Promise<void>;
  batchGet(p: { account?: string; id: string }): Promise<BatchRecord | undefined>;
  /** The account's batches, newest first, those created before `afterId` when given. */
  batchList(p: { account?: string; afterId?: string; limit: number }): Promise<BatchRecord[]>;
  /** Replaces the batch while its stored version is `expectedVersion`; false (nothing written) otherwise. */
  batchWrite(p: { batch: BatchRecord; expectedVersion: number }): Promise<boolean>;
  /** Batches of every account that are not done (isBatchDone), oldest first, after `afterId`. */
  batchListActive(p: { afterId?: string; limit: number }): Promise<BatchRecord[]>;
  /**
   * In ONE transaction: replaces the batch as batchWrite would (refused: nothing written), creates
   * `items` as jobCreateMany would, and records each created-or-found job as line `lines[i]` of the
   * batch (a line recorded already keeps its job).
   */
  batchSubmit(p: { batch: BatchRecord; expectedVersion: number; items: JobCreateItem[]; lines: Array<{ line: number; customId: string }>; nowMs: number }): Promise<{ written: false } | { written: true; results: JobCreateResult[] }>;
  /** How many of the batch's lines' jobs are in each status (`missing`: pruned or deleted with their queue). */
  batchJobCounts(p: { batchId: string }): Promise<Record<string, number>>;
  /** The batch's lines after `afterLine` in line order, at most `limit`, joined with their jobs; `liveOnly`: only those queued, waiting or running. */
  batchJobRows(p: { batchId: string; afterLine: number; limit: number; liveOnly?: boolean }): Promise<BatchJobRow[]>;
}
