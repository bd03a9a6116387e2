/**
 * Gathers the `submit()` and `run()` calls of one event-loop turn into one
 * `POST …/jobs/batch` (with `?wait=` for `run()`): an API server submitting for many users at once
 * pays for one HTTP request instead of dozens, on both sides. Each caller still gets its own job,
 * its own outcome (one bad entry fails only itself), and with `run()` its answer the moment its own
 * job finishes — the server streams a line per job. A call alone in its turn goes out as a lone
 * submit, exactly as without batching.
 */
import { SluiceApiError, SluiceNetworkError } from "./errors.js";
import { isRetryable } from "./http.js";
import { type ClientContext, longPollGraceMs } from "./jobs.js";
import { queuePath } from "./paths.js";
import { nextTurn, sleep } from "./timers.js";
import type { Job, JobResponse, SubmitRequest } from "./wire.js";

/** The server takes at most this many jobs in one batch (its limits.jobs.submitBatchMaxJobs). */
export const submitBatchMaxJobs = 100;

export interface Submitted {
  job: Job<unknown, unknown>;
  /** An earlier submit with the same idempotency key and body made this job. */
  replayed: boolean;
}

/** One submit as the batch route takes it: a lone submit's body and its idempotency key. */
export type SubmitEntry = SubmitRequest<unknown> & { idempotencyKey?: string };

interface Pending {
  entry: SubmitEntry;
  waitSeconds: number;
  signal: AbortSignal | undefined;
  settled: boolean;
  resolve(value: Submitted): void;
  reject(reason: unknown): void;
}

/** One entry's outcome on the wire (a line of the NDJSON answer, or an element of `results`). */
interface BatchResult {
  index: number;
  status: number;
  job?: Job<unknown, unknown>;
  error?: { code: string; message: string };
}

/** A submit on its own: `POST …/jobs` with the key as the Idempotency-Key header, retried as the client's other idempotent calls. */
export async function submitAlone(ctx: ClientContext, queueName: string, entry: SubmitEntry, waitSeconds: number, signal: AbortSignal | undefined): Promise<Submitted> {
  const { idempotencyKey, ...body } = entry;
  const res = await ctx.http.request<JobResponse<unknown, unknown>>("POST", `${queuePath(queueName)}/jobs`, {
    body,
    ...(waitSeconds > 0 ? { query: { wait: waitSeconds }, timeoutMs: waitSeconds * 1000 + longPollGraceMs } : {}),
    ...(idempotencyKey !== undefined ? { headers: { "idempotency-key": idempotencyKey } } : {}),
    maxAttempts: ctx.attempts,
    signal,
  });
  return { job: res.body.job, replayed: res.status === 200 };
}

export class SubmitBatcher {
  private pending: Pending[] = [];
  /** False once the server turned out to have no batch route: every submit then goes alone. */
  private batchRoute = true;

  constructor(
    private readonly ctx: ClientContext,
    private readonly queueName: string,
  ) {}

  /** Submits `entry` with the others of this turn; resolves with its job once terminal or `waitSeconds` passed (0: at once). */
  submit(entry: SubmitEntry, waitSeconds: number, signal: AbortSignal | undefined): Promise<Submitted> {
    return new Promise<Submitted>((resolve, reject) => {
      if (this.pending.length === 0) nextTurn(() => this.flush());
      this.pending.push({ entry, waitSeconds, signal, settled: false, resolve, reject });
    });
  }

  private flush(): void {
    const ready = this.pending.filter((p) => !abortedBeforeSending(p));
    this.pending = [];
    // Holds of different lengths can't share a request: the server holds a whole batch for one ?wait.
    const byWait = new Map<number, Pending[]>();
    for (const p of ready) {
      const group = byWait.get(p.waitSeconds);
      if (group) group.push(p);
      else byWait.set(p.waitSeconds, [p]);
    }
    for (const [waitSeconds, group] of byWait) {
      if (group.length === 1 || !this.batchRoute) for (const p of group) this.sendAlone(p, waitSeconds);
      else for (let i = 0; i < group.length; i += submitBatchMaxJobs) void this.send(group.slice(i, i + submitBatchMaxJobs), waitSeconds, 1);
    }
  }

  private sendAlone(p: Pending, waitSeconds: number): void {
    submitAlone(this.ctx, this.queueName, p.entry, waitSeconds, p.signal).then(
      (submitted) => settle(p, () => p.resolve(submitted)),
      (err: unknown) => settle(p, () => p.reject(err)),
    );
  }

  private async send(batch: Pending[], waitSeconds: number, attempt: number): Promise<void> {
    // Once every caller gave up (or was answered), the request goes too, as a lone call's would:
    // the server then drops the holds of the callers who left instead of keeping them to their end.
    const unwanted = new AbortController();
    const stopWatching = batch.map((p) => watchAbort(p, () => batch.every((q) => q.settled) && unwanted.abort()));
    const path = `${queuePath(this.queueName)}/jobs/batch`;
    const onResult = (r: BatchResult): void => {
      const p = batch[r.index];
      if (!p) return;
      if (r.job) settle(p, () => p.resolve({ job: r.job!, replayed: r.status === 200 }));
      else settle(p, () => p.reject(new SluiceApiError(r.error?.code ?? `Http${r.status}`, r.status, r.error?.message ?? `HTTP ${r.status}`)));
    };
    try {
      const body = { jobs: batch.map((p) => p.entry) };
      if (waitSeconds > 0) {
        await this.ctx.http.requestLines("POST", path, { body, query: { wait: waitSeconds }, timeoutMs: waitSeconds * 1000 + longPollGraceMs, signal: unwanted.signal }, (line) =>
          onResult(line as BatchResult),
        );
      } else {
        const res = await this.ctx.http.request<{ results: BatchResult[] }>("POST", path, { body, signal: unwanted.signal });
        for (const r of res.body.results) onResult(r);
      }
      const unanswered = batch.filter((p) => !p.settled).length;
      if (unanswered > 0) throw new SluiceNetworkError(`POST ${path}: the answer ended without ${unanswered} of its jobs`);
    } catch (err) {
      if (unwanted.signal.aborted) return; // every caller is answered already
      if (refusedAsAWhole(err)) {
        // No entry was submitted (one entry's bad option fails the body's validation; many big
        // inputs together pass the body limit; a server from before the batch route has no such
        // route): each goes alone, for the outcome it would have had.
        if (routeMissing(err)) this.batchRoute = false;
        for (const p of batch) if (!p.settled) this.sendAlone(p, waitSeconds);
        return;
      }
      // Resending is safe only for entries with an idempotency key (the SDK gives each one when
      // retries are on): one the server already took gives back the same job. The others are
      // answered now, not after the resends.
      const retrying = isRetryable(err) && attempt < this.ctx.attempts;
      const again = retrying ? batch.filter((p) => !p.settled && p.entry.idempotencyKey !== undefined) : [];
      for (const p of batch) if (!again.includes(p)) settle(p, () => p.reject(err));
      if (again.length > 0) {
        await sleep(this.ctx.timers, this.ctx.http.retryDelayMs(attempt, err), undefined);
        const still = again.filter((p) => !p.settled);
        if (still.length > 0) await this.send(still, waitSeconds, attempt + 1);
      }
      for (const p of batch) settle(p, () => p.reject(err));
    } finally {
      for (const stop of stopWatching) stop();
    }
  }
}

/**
 * The server refused the batch request as a whole, before submitting any of it: 400 (the body's
 * shape — the server checks every entry's options before taking any) or 413 (too large).
 */
function refusedAsAWhole(err: unknown): err is SluiceApiError {
  return err instanceof SluiceApiError && (err.status === 400 || err.status === 413 || routeMissing(err));
}

/** A server from before POST …/jobs/batch: its router knows no such route (404 without one of the jobs API's codes, or 405). */
function routeMissing(err: SluiceApiError): boolean {
  return err.status === 405 || (err.status === 404 && !knownNotFoundCodes.has(err.code));
}

const knownNotFoundCodes = new Set(["JobNotFound", "QueueNotFound", "ResourceNotFound"]);

function settle(p: Pending, fn: () => void): void {
  if (p.settled) return;
  p.settled = true;
  fn();
}

/** A caller who gave up before the batch left creates no job. */
function abortedBeforeSending(p: Pending): boolean {
  if (!p.signal?.aborted) return false;
  settle(p, () => p.reject(p.signal!.reason));
  return true;
}

/** A caller who gives up while the batch is out is answered at once (then `afterAbort` runs); the others go on. */
function watchAbort(p: Pending, afterAbort: () => void): () => void {
  const signal = p.signal;
  if (!signal) return () => {};
  const onAbort = (): void => {
    settle(p, () => p.reject(signal.reason));
    afterAbort();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}
