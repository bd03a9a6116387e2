/**
 * `job.stream()`: a job's streamed output (what its worker sends with ctx.emit), chunk by chunk
 * and in order, from its first chunk until the job ends. It follows the job's event stream
 * (resumed by itself after a dropped connection) and reads what came before it joined from
 * `GET /v1/jobs/{id}/output-chunks`; chunks are placed by their index, so none is given twice.
 */
import { JobCanceledError, JobFailedError } from "./errors.js";
import type { HttpClient } from "./http.js";
import { jobPath } from "./paths.js";
import { type Job, type JobEventMessage, type JobOutputEvent, type JsonValue, type OutputChunksResponse, terminalStatuses } from "./wire.js";

export interface StreamOptions {
  /** Ends the stream (the iterator returns). */
  signal?: AbortSignal;
  /**
   * A retry started attempt N: the chunks given so far came from an attempt that was abandoned,
   * and the stream goes on with this attempt's, from its first. (Later chunks of the abandoned
   * attempt are dropped.)
   */
  onNewAttempt?: (attempt: number) => void;
}

/** Where the stream is: the attempt it follows and the index of the next chunk it gives. */
interface Position {
  attempt: number;
  next: number;
}

/**
 * The chunks of job `id`. `events` is the job's event stream (a `job.snapshot` first). Ends when
 * the job succeeds; throws JobFailedError when it fails and JobCanceledError when it is canceled.
 */
export async function* jobOutput<Chunk = JsonValue>(
  http: HttpClient,
  id: string,
  events: AsyncGenerator<JobEventMessage<unknown, unknown>, void, undefined>,
  opts: StreamOptions,
): AsyncGenerator<Chunk, void, undefined> {
  const at: Position = { attempt: 0, next: 0 };
  let last: Job<unknown, unknown> | undefined;
  try {
    // The snapshot comes once the server follows the job: what was stored before it is read next,
    // and what comes after it arrives as events (chunks seen twice are placed once, by index).
    const first = await events.next();
    if (first.done) return;
    last = first.value.job;
    yield* catchUp<Chunk>(http, id, at, opts);
    if (!terminalStatuses.has(last.status)) {
      for await (const e of events) {
        if (e.type === "job.output") {
          yield* place<Chunk>(http, id, at, e as unknown as JobOutputEvent<Chunk>, opts);
        } else {
          // A reconnect that had no position starts over with a snapshot: what was stored meanwhile is read now.
          if (e.type === "job.snapshot") yield* catchUp<Chunk>(http, id, at, opts);
          last = e.job;
          if (terminalStatuses.has(last.status)) break;
        }
      }
    }
    // Anything stored that no event brought (the stream ended early, or the job had ended before).
    yield* catchUp<Chunk>(http, id, at, opts);
  } finally {
    await events.return(undefined);
  }
  if (opts.signal?.aborted || last === undefined) return;
  if (last.status === "failed") throw new JobFailedError(last);
  if (last.status === "canceled") throw new JobCanceledError(id);
}

/** The chunks stored from the position on, page by page, as the server has them now. */
async function* catchUp<Chunk>(http: HttpClient, id: string, at: Position, opts: StreamOptions): AsyncGenerator<Chunk, void, undefined> {
  for (;;) {
    const res = await http.request<OutputChunksResponse<Chunk>>("GET", `${jobPath(id)}/output-chunks`, { query: { from: at.next }, signal: opts.signal, maxAttempts: 3 });
    const page = res.body;
    if (page.attempt < at.attempt) return;
    if (page.attempt > at.attempt) {
      if (at.attempt > 0 || at.next > 0) opts.onNewAttempt?.(page.attempt);
      at.attempt = page.attempt;
      if (at.next !== 0) {
        at.next = 0; // read the new attempt from its first chunk
        continue;
      }
    }
    if (page.chunks.length === 0) return;
    for (const chunk of page.chunks) yield chunk;
    at.next += page.chunks.length;
  }
}

/** One job.output event's chunks, placed at their index: older attempts dropped, overlaps trimmed, a gap read first. */
async function* place<Chunk>(http: HttpClient, id: string, at: Position, e: JobOutputEvent<Chunk>, opts: StreamOptions): AsyncGenerator<Chunk, void, undefined> {
  if (e.attempt < at.attempt) return;
  if (e.attempt > at.attempt) {
    if (at.attempt > 0 || at.next > 0) opts.onNewAttempt?.(e.attempt);
    at.attempt = e.attempt;
    at.next = 0;
  }
  if (e.index > at.next) {
    yield* catchUp<Chunk>(http, id, at, opts);
    if (at.attempt !== e.attempt) return; // the catch-up found a newer attempt
  }
  const from = at.next - e.index;
  if (from < 0 || from >= e.chunks.length) return;
  for (let i = from; i < e.chunks.length; i++) yield e.chunks[i]!;
  at.next = e.index + e.chunks.length;
}
