/**
 * What may be attached to a job (`submit(input, { attachments })`, `ctx.attach(name, data)`), and
 * how each becomes an upload body: bytes as they are, a file or a stream streamed — never read
 * whole into memory — or an existing blob reused without uploading anything.
 */

/** Bytes to upload: a Buffer or Uint8Array, a Blob, a ReadableStream, or any async iterable of byte chunks (a Node Readable). */
export type AttachmentData = Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/**
 * One attachment: its data, a file by `path` (Node; streamed from disk), either with its
 * `contentType`, or a blob uploaded ahead by id (`sluice.blobs.upload()`'s Attachment is one; a
 * blob belongs to one job, so another job's attachment is uploaded again, e.g. by its `stream()`).
 */
export type AttachmentSource = AttachmentData | { data: AttachmentData; contentType?: string } | { path: string; contentType?: string } | { blobId: string };

/** A source ready to upload: `body()` makes a fresh body each time it is called, when `replayable`. */
export interface UploadPlan {
  contentType: string;
  /** Whether the body can be made again (a failed PUT sent again); a stream can't. */
  replayable: boolean;
  body(): Promise<RequestInit["body"]>;
}

export type ResolvedSource = { blobId: string } | UploadPlan;

const octetStream = "application/octet-stream";
/** Attachment names: 1–64 of [A-Za-z0-9._-] (docs/jobs-api.md). */
const namePattern = /^[A-Za-z0-9._-]{1,64}$/;
/** Attachments per job at most (docs/jobs-api.md). */
export const maxAttachments = 16;

/** The content type of a file by its extension, for the kinds an inference job meets; octet-stream otherwise. */
const typesByExtension: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pgm: "image/x-portable-graymap",
  ppm: "image/x-portable-pixmap",
  wav: "audio/wav",
  mp3: "audio/mpeg",
  flac: "audio/flac",
  ogg: "audio/ogg",
  mp4: "video/mp4",
  pdf: "application/pdf",
  json: "application/json",
  jsonl: "application/x-ndjson",
  txt: "text/plain",
  csv: "text/csv",
};

export function contentTypeOfPath(path: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return (ext !== undefined ? typesByExtension[ext] : undefined) ?? octetStream;
}

/** Throws for a name the server would refuse, or too many attachments, before anything is uploaded. */
export function checkAttachmentNames(names: readonly string[], what: string): void {
  for (const name of names) {
    if (!namePattern.test(name)) throw new TypeError(`${what}: attachment name ${JSON.stringify(name)} must be 1–64 characters of A–Z a–z 0–9 . _ -`);
  }
  if (names.length > maxAttachments) throw new RangeError(`${what}: ${names.length} attachments; a job takes at most ${maxAttachments}`);
}

export function resolveSource(source: AttachmentSource, name: string): ResolvedSource {
  if (isObject(source) && "blobId" in source) {
    if (typeof source.blobId !== "string" || source.blobId === "") throw new TypeError(`attachment ${name}: blobId must be a non-empty string`);
    return { blobId: source.blobId };
  }
  if (isObject(source) && "path" in source) return fromPath(source.path, source.contentType, name);
  if (isObject(source) && "data" in source && !isData(source)) return fromData(source.data, source.contentType, name);
  return fromData(source as AttachmentData, undefined, name);
}

function fromPath(path: unknown, contentType: string | undefined, name: string): UploadPlan {
  if (typeof path !== "string" || path === "") throw new TypeError(`attachment ${name}: path must be a non-empty string`);
  return { contentType: contentType ?? contentTypeOfPath(path), replayable: true, body: () => openFile(path) };
}

function fromData(data: AttachmentData, contentType: string | undefined, name: string): UploadPlan {
  // fetch reads a Uint8Array over a SharedArrayBuffer too; TypeScript's BodyInit names only ArrayBuffer views.
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) return { contentType: contentType ?? octetStream, replayable: true, body: async () => data as Uint8Array<ArrayBuffer> };
  if (typeof Blob !== "undefined" && data instanceof Blob) return { contentType: contentType ?? (data.type || octetStream), replayable: true, body: async () => data };
  if (typeof ReadableStream !== "undefined" && data instanceof ReadableStream) return { contentType: contentType ?? octetStream, replayable: false, body: async () => data };
  if (isObject(data) && Symbol.asyncIterator in data) return { contentType: contentType ?? octetStream, replayable: false, body: async () => streamOf(data) };
  throw new TypeError(`attachment ${name}: expected a Uint8Array, Blob, ReadableStream, async iterable of bytes, {path}, {data} or {blobId}; got ${describe(data)}`);
}

/** A file as a Blob backed by the file (Node's fs.openAsBlob): fetch streams it from disk with its length known. */
async function openFile(path: string): Promise<Blob> {
  // Imported by name, not statically: the SDK runs in browsers too, and only {path} needs Node.
  const specifier = "node:fs";
  const fs = (await import(specifier)) as { openAsBlob?: (path: string) => Promise<Blob> };
  if (typeof fs.openAsBlob !== "function") throw new TypeError("attachment {path} needs Node ≥ 19.8 (fs.openAsBlob)");
  return fs.openAsBlob(path);
}

/** An async iterable of chunks as a ReadableStream, read only as fetch pulls it. */
function streamOf(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await it.next();
      if (done) controller.close();
      else controller.enqueue(value instanceof Uint8Array ? value : new TextEncoder().encode(String(value)));
    },
    async cancel(reason) {
      await it.return?.(reason);
    },
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

/** Data that happens to have a `data` key is still data (a Blob never has one; a plain object does). */
function isData(v: object): boolean {
  return v instanceof Uint8Array || v instanceof ArrayBuffer || (typeof Blob !== "undefined" && v instanceof Blob) || (typeof ReadableStream !== "undefined" && v instanceof ReadableStream) || Symbol.asyncIterator in v;
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (typeof v !== "object") return typeof v;
  return v.constructor?.name ?? "object";
}
