/**
 * Files in core: stored as they stream in (re-cut into fixed chunks, so memory holds one chunk
 * whatever the upload's size), read back chunk by chunk, deleted. A file is its account's; one
 * still uploading is not found.
 */
import type { Clock } from "../clock.js";
import { SluiceError, fail } from "../errors.js";
import type { IdSource } from "../ids.js";
import { limits } from "../limits.js";
import type { FileRecord } from "./batch.js";
import type { BatchStore } from "./batch-store.js";
import { countNewlines } from "./jsonl-lines.js";

export const filePurposes = ["batch", "batch_output"] as const;

export class FileService {
  constructor(private readonly deps: { store: BatchStore; clock: Clock; ids: IdSource }) {}

  /** A new file id: `file-` and the id source's (time-ordered) id without dashes. */
  newFileId(): string {
    return `file-${this.deps.ids.messageId().replace(/-/g, "")}`;
  }

  /**
   * Stores `bytes` as a new file of the account. `purpose` may be known only once the bytes are
   * in (a multipart form may send it after the file): `purposeOf` is asked then. Anything wrong
   * (too big, too many lines, a bad purpose, the stream failing) deletes what was written.
   */
  async upload(account: string, p: { filename: string; purposeOf: () => string | undefined; bytes: AsyncIterable<Uint8Array> }): Promise<FileRecord> {
    const b = limits.batches;
    return this.storeNew(account, p.filename, "batch", async (file) => {
      await this.writeChunks(file, p.bytes, { maxBytes: b.fileMaxBytes, maxLines: b.fileMaxLines });
      const purpose = p.purposeOf();
      if (purpose === undefined) fail("ValidationFailed", "purpose is required: send the form field purpose=batch.");
      if (purpose !== "batch") fail("ValidationFailed", `purpose ${JSON.stringify(purpose)} is not supported here: only "batch".`);
      file.purpose = purpose;
    });
  }

  /** Writes a file the server makes (a batch's output or errors) from lines of text; answers it processed. */
  async writeLines(account: string, p: { filename: string; purpose: string; lines: AsyncIterable<string> }): Promise<FileRecord> {
    const encoder = new TextEncoder();
    async function* bytes(): AsyncGenerator<Uint8Array> {
      for await (const line of p.lines) yield encoder.encode(`${line}\n`);
    }
    return this.storeNew(account, p.filename, p.purpose, (file) => this.writeChunks(file, bytes(), {}));
  }

  /** A new file record, `fill`ed and then marked processed; if anything fails, what was written is deleted. */
  private async storeNew(account: string, filename: string, purpose: string, fill: (file: FileRecord) => Promise<void>): Promise<FileRecord> {
    const file: FileRecord = { id: this.newFileId(), filename, purpose, bytes: 0, chunks: 0, lines: 0, createdAtMs: this.deps.clock.nowMs(), status: "uploading" };
    if (account !== "") file.account = account;
    await this.deps.store.fileCreate({ file });
    try {
      await fill(file);
      file.status = "processed";
      await this.deps.store.fileUpdate({ file });
      return file;
    } catch (err) {
      await this.deps.store.fileDelete({ account, id: file.id }).catch(() => undefined);
      throw err;
    }
  }

  async get(account: string, id: string): Promise<FileRecord> {
    const file = await this.deps.store.fileGet({ account, id });
    if (!file || file.status !== "processed") throw new SluiceError("ResourceNotFound", `File ${id} does not exist.`);
    return file;
  }

  /** The file's bytes, one stored chunk at a time. */
  async *content(file: FileRecord): AsyncGenerator<Uint8Array> {
    for (let index = 0; index < file.chunks; index++) {
      const [chunk] = await this.deps.store.fileChunkRead({ fileId: file.id, fromIndex: index, limit: 1 });
      if (!chunk) throw new Error(`file ${file.id} lost chunk ${index}`);
      yield chunk;
    }
  }

  async delete(account: string, id: string): Promise<void> {
    await this.get(account, id);
    await this.deps.store.fileDelete({ account, id });
  }

  private async writeChunks(file: FileRecord, source: AsyncIterable<Uint8Array>, max: { maxBytes?: number; maxLines?: number }): Promise<void> {
    const size = limits.batches.fileChunkBytes;
    let buffer = new Uint8Array(size);
    let filled = 0;
    let endsWithNewline = true;
    const flush = async (): Promise<void> => {
      await this.deps.store.fileChunkWrite({ fileId: file.id, index: file.chunks, data: buffer.subarray(0, filled) });
      file.chunks++;
      buffer = new Uint8Array(size);
      filled = 0;
    };
    for await (const piece of source) {
      if (piece.length === 0) continue;
      file.bytes += piece.length;
      if (max.maxBytes !== undefined && file.bytes > max.maxBytes) fail("ValidationFailed", `The file is over ${max.maxBytes} bytes.`);
      file.lines += countNewlines(piece);
      endsWithNewline = piece[piece.length - 1] === 0x0a;
      if (max.maxLines !== undefined && file.lines > max.maxLines) fail("ValidationFailed", `The file has over ${max.maxLines} lines.`);
      let at = 0;
      while (at < piece.length) {
        const n = Math.min(size - filled, piece.length - at);
        buffer.set(piece.subarray(at, at + n), filled);
        filled += n;
        at += n;
        if (filled === size) await flush();
      }
    }
    if (filled > 0) await flush();
    if (!endsWithNewline) file.lines++;
    if (max.maxLines !== undefined && file.lines > max.maxLines) fail("ValidationFailed", `The file has over ${max.maxLines} lines.`);
  }
}
