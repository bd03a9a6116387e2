/**
 * The Batch API's handlers (batch-route-specs.ts): core's FileService and BatchService answered
 * in OpenAI's shapes, so the official `openai` clients work with Sluice as their base URL. An
 * upload is parsed as it arrives and handed to core chunk by chunk, never held whole.
 */
import { Readable } from "node:stream";
import { Busboy } from "@fastify/busboy";
import type { FastifyReply } from "fastify";
import { type BatchCreateInput, type BatchRecord, type BatchService, type FileRecord, type FileService, fail, limits } from "../../core/index.js";
import type { Handler, Request } from "./route-handler.js";

/** Room for the form's other fields and part headers around the file. */
const formOverheadBytes = 65_536;

const seconds = (ms: number | undefined): number | null => (ms === undefined ? null : Math.floor(ms / 1000));

export function fileWire(f: FileRecord): Record<string, unknown> {
  return { id: f.id, object: "file", bytes: f.bytes, created_at: seconds(f.createdAtMs), filename: f.filename, purpose: f.purpose, status: "processed", expires_at: null, status_details: null };
}

export function batchWire(b: BatchRecord): Record<string, unknown> {
  return {
    id: b.id,
    object: "batch",
    endpoint: b.endpoint,
    errors: b.errors ? { object: "list", data: b.errors.map((e) => ({ code: e.code, message: e.message, param: e.param ?? null, line: e.line ?? null })) } : null,
    input_file_id: b.inputFileId,
    completion_window: b.completionWindow,
    status: b.status,
    output_file_id: b.outputFileId ?? null,
    error_file_id: b.errorFileId ?? null,
    created_at: seconds(b.createdAtMs),
    in_progress_at: seconds(b.inProgressAtMs),
    expires_at: seconds(b.expiresAtMs),
    finalizing_at: seconds(b.finalizingAtMs),
    completed_at: seconds(b.completedAtMs),
    failed_at: seconds(b.failedAtMs),
    expired_at: seconds(b.expiredAtMs),
    cancelling_at: seconds(b.cancellingAtMs),
    cancelled_at: seconds(b.cancelledAtMs),
    request_counts: b.counts,
    metadata: b.metadata ?? null,
  };
}

type SendJson = (reply: FastifyReply, status: number, json: string) => FastifyReply;

export function batchHandlers(o: { files: FileService; batches: BatchService }, sendJson: SendJson): Record<string, Handler> {
  return {
    async uploadFile(request, reply) {
      const file = await receiveUpload(request, o.files);
      return sendJson(reply, 200, JSON.stringify(fileWire(file)));
    },
    async getFile(request, reply) {
      return sendJson(reply, 200, JSON.stringify(fileWire(await o.files.get(request.storeAccount, request.params.file_id!))));
    },
    async getFileContent(request, reply) {
      const file = await o.files.get(request.storeAccount, request.params.file_id!);
      void reply.code(200).header("content-type", "application/octet-stream").header("content-length", String(file.bytes));
      return reply.send(Readable.from(o.files.content(file), { objectMode: false }));
    },
    async deleteFile(request, reply) {
      const id = request.params.file_id!;
      await o.files.delete(request.storeAccount, id);
      return sendJson(reply, 200, JSON.stringify({ id, object: "file", deleted: true }));
    },
    async createBatch(request, reply) {
      const batch = await o.batches.create(request.storeAccount, request.body as BatchCreateInput);
      return sendJson(reply, 200, JSON.stringify(batchWire(batch)));
    },
    async listBatches(request, reply) {
      const q = request.query as { after?: string; limit?: number };
      const page = await o.batches.list(request.storeAccount, q);
      const data = page.batches.map(batchWire);
      const body = { object: "list", data, first_id: page.batches[0]?.id ?? null, last_id: page.batches.at(-1)?.id ?? null, has_more: page.hasMore };
      return sendJson(reply, 200, JSON.stringify(body));
    },
    async getBatch(request, reply) {
      return sendJson(reply, 200, JSON.stringify(batchWire(await o.batches.get(request.storeAccount, request.params.batch_id!))));
    },
    async cancelBatch(request, reply) {
      return sendJson(reply, 200, JSON.stringify(batchWire(await o.batches.cancel(request.storeAccount, request.params.batch_id!))));
    },
  };
}

/**
 * Reads the multipart form as it arrives: its `file` part streams into core (which re-cuts it
 * into stored chunks); `purpose` may come before or after it. Whatever goes wrong, the rest of
 * the request is read and dropped, so the error answer reaches the client.
 */
async function receiveUpload(request: Request, files: FileService): Promise<FileRecord> {
  const contentType = request.headers["content-type"];
  if (typeof contentType !== "string" || !contentType.toLowerCase().startsWith("multipart/form-data")) fail("ValidationFailed", "Upload the file as multipart/form-data with the fields file and purpose.");
  // A body declared bigger than any file the form could carry is refused before it is read.
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > limits.batches.fileMaxBytes + formOverheadBytes) fail("ValidationFailed", `The file is over ${limits.batches.fileMaxBytes} bytes.`);
  let parser;
  try {
    parser = Busboy({ headers: { ...request.headers, "content-type": contentType }, limits: { files: 1, fields: 8, fieldSize: 1024, fileSize: limits.batches.fileMaxBytes + 1 } });
  } catch {
    fail("ValidationFailed", "The multipart/form-data body has no boundary.");
  }
  const fields = new Map<string, string>();
  parser.on("field", (name: string, value: string) => fields.set(name, value));
  const finished = new Promise<void>((resolve, reject) => {
    parser.on("finish", resolve);
    parser.on("error", reject);
  });
  const part = new Promise<{ stream: AsyncIterable<Uint8Array>; filename: string } | undefined>((resolve, reject) => {
    parser.on("file", (name: string, stream: Readable, filename: string) => {
      if (name !== "file") {
        stream.resume();
        return;
      }
      resolve({ stream, filename: filename || "upload.jsonl" });
    });
    finished.then(() => resolve(undefined), reject);
  });
  request.raw.pipe(parser);
  try {
    const got = await part;
    if (!got) fail("ValidationFailed", "The form has no file part: send the JSONL file in the field file.");
    async function* bytes(): AsyncGenerator<Uint8Array> {
      for await (const chunk of got!.stream) yield chunk;
      // purpose may follow the file in the form: it is known once the whole form is read.
      await finished;
    }
    return await files.upload(request.storeAccount, { filename: got.filename, purposeOf: () => fields.get("purpose"), bytes: bytes() });
  } catch (err) {
    request.raw.unpipe(parser);
    request.raw.resume();
    throw err;
  }
}
