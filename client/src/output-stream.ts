/**
 * ctx.emit(): a running job's streamed output (tokens, partial results), sent in order as
 * `POST /v1/jobs/{id}/output`, one request in flight at a time: what is emitted while none is goes
 * at the end of the turn (at once at 100 chunks); what is emitted meanwhile goes, up to the
 * server's 1,000 chunks a request, as soon as the request before it is answered. Batches form
 * from the wait alone; a window would add latency. A slow answer lets more gather, so a backlog
 * drains in big requests instead of growing behind small ones.
 * A request that failed in flight is checked against the server's count before it is sent again,
 * so a chunk is never stored twice.
 */
import { backoffDelayMs, defaultBackoff } from "./backoff.js";
import { LeaseLostError, SluiceApiError } from "./errors.js";
import { type HttpClient, isRetryable } from "./http.js";
import { jobPath } from "./paths.js";
import { type Timers, sleep } from "./timers.js";
import type { JsonValue, OutputChunksResponse, OutputResponse } from "./wire.js";

/** Chunks that go at once, without waiting for the end of the turn, when no request is in flight. */
export const outputBatchChunks = 100;
/** Chunks one request carries at most: the server's limit. */
export const outputRequestChunks = 1000;
/** Bytes of JSON one request carries at most (under the server's 1 MiB, with room for the envelope). */
const requestBytesMax = 1_000_000;

export interface OutputStreamDeps {
  http: HttpClient;
  timers: Timers;
  jobId: string;
  attempt: number;
  leaseId: string;
  /** The server said the job's cancel was requested. */
  onCancelRequested(): void;
  /** The lease is gone (409 / 404): nothing more may be sent. */
  onLost(code: string): void;
  /** When the lease surely ended: a transient failure is retried until then. */
  leaseEndsAtMs(): number;
}

interface Pending {
  chunk: JsonValue;
  bytes: number;
}

export class OutputStream {
  private buffer: Pending[] = [];
  /** Chunks of this attempt the server has stored. */
  private stored = 0;
  private cancelTimer: (() => void) | undefined;
  /** The sends, one after another: each drains what is buffered when it runs. */
  private sending: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  /** A request is in flight: what is emitted now goes when it is answered. */
  private draining = false;

  constructor(private readonly deps: OutputStreamDeps) {}

  /** Buffers one chunk (any JSON value); throws at once for a value JSON cannot carry, or once the lease is lost. */
  emit(chunk: JsonValue): void {
    if (this.failure) throw this.failure;
    const json = JSON.stringify(chunk) as string | undefined;
    if (json === undefined) throw new TypeError("ctx.emit() takes a JSON value; got undefined (or a function)");
    const bytes = utf8Length(json);
    if (bytes > requestBytesMax) throw new RangeError(`a chunk of ${bytes} bytes of JSON is over the ${requestBytesMax} a request may carry`);
    this.buffer.push({ chunk, bytes });
    if (this.buffer.length >= outputBatchChunks) this.sendNow();
    else if (!this.draining) this.cancelTimer ??= this.deps.timers.schedule(0, () => this.sendNow());
  }

  /** Resolves once every chunk emitted so far is stored; rejects with the LeaseLostError if the lease was lost. */
  async flush(): Promise<void> {
    this.sendNow();
    await this.sending;
    if (this.failure) throw this.failure;
  }

  /** How many chunks of this attempt the server has stored. */
  get storedCount(): number {
    return this.stored;
  }

  private sendNow(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.sending = this.sending.then(() => this.drain());
  }

  private async drain(): Promise<void> {
    this.draining = true;
    while (this.buffer.length > 0 && !this.failure) {
      let n = 0;
      let bytes = 0;
      while (n < this.buffer.length && n < outputRequestChunks && bytes + this.buffer[n]!.bytes + 1 <= requestBytesMax) bytes += this.buffer[n++]!.bytes + 1;
      const batch = this.buffer.slice(0, n);
      if (await this.send(batch)) this.buffer.splice(0, n);
    }
    this.draining = false;
  }

  /** Sends one batch; true once it is stored, false when the lease is lost (the buffer is dropped). */
  private async send(batch: Pending[]): Promise<boolean> {
    const body = { leaseId: this.deps.leaseId, chunks: batch.map((p) => p.chunk) };
    for (let failures = 0; ; failures++) {
      try {
        const res = await this.deps.http.request<OutputResponse>("POST", `${jobPath(this.deps.jobId)}/output`, { body });
        this.stored = res.body.chunks;
        if (res.body.cancelRequested) this.deps.onCancelRequested();
        return true;
      } catch (err) {
        if (err instanceof SluiceApiError && (err.status === 409 || err.status === 404)) return this.lose(err.code);
        if (!isRetryable(err) || this.deps.timers.nowMs() >= this.deps.leaseEndsAtMs()) {
          this.failure = err instanceof Error ? err : new Error(String(err));
          this.buffer = [];
          return false;
        }
        // Sent but unanswered (a dropped connection)? The attempt's count says whether it landed.
        if (await this.landed(batch.length)) return true;
        await sleep(this.deps.timers, backoffDelayMs(failures, defaultBackoff));
      }
    }
  }

  /** Whether the server's count for this attempt shows the batch stored; false when it can't tell. */
  private async landed(size: number): Promise<boolean> {
    try {
      const res = await this.deps.http.request<OutputChunksResponse>("GET", `${jobPath(this.deps.jobId)}/output-chunks`, { query: { from: this.stored } });
      if (res.body.attempt !== this.deps.attempt || res.body.next < this.stored + size) return false;
      this.stored += size;
      return true;
    } catch {
      return false;
    }
  }

  private lose(code: string): false {
    this.failure = new LeaseLostError(this.deps.jobId, code);
    this.buffer = [];
    this.deps.onLost(code);
    return false;
  }
}

/** Bytes of `s` in UTF-8, without encoding it (the SDK has no Buffer in browsers). */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 2; // a surrogate pair: 4 bytes for its 2 UTF-16 units
      i++;
    } else n += 2;
  }
  return n;
}
