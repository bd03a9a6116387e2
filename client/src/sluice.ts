/**
 * The SDK's entry point: `new Sluice({ url, token })`.
 */
import type { BackoffPolicy } from "./backoff.js";
import { BlobTransfer } from "./blob-transfer.js";
import { BlobsClient } from "./blobs.js";
import { type FetchLike, HttpClient } from "./http.js";
import { type EventStreamOptions, eventStream } from "./event-stream.js";
import { type ClientContext, JobsClient } from "./jobs.js";
import { QueueClient } from "./queue.js";
import { SchedulesClient } from "./schedules.js";
import { SubmitBatcher } from "./submit-batcher.js";
import { type Timers, systemTimers } from "./timers.js";
import type { JobEventMessage, JsonValue, WorkerInfo } from "./wire.js";

export interface SluiceOptions {
  /** The server's base URL, e.g. http://127.0.0.1:9324. */
  url: string;
  /** Bearer token for servers that require one. */
  token?: string;
  /**
   * Act for this account (its 12-digit id): every request sends `Sluice-Account`. Only a token
   * of the server's own account may name another account; others may name only their own.
   */
  account?: string;
  /** Attempts for calls that are safe to repeat, the first included. Default 5. */
  attempts?: number;
  /** Backoff between those attempts (full jitter). Default 100 ms doubling to 5 s. */
  backoff?: BackoffPolicy;
  /**
   * Gather the submit() and run() calls made in one event-loop turn into one request per queue
   * (`POST …/jobs/batch`); each call still gets its own job and outcome. Default true. Off, every
   * submit is its own `POST …/jobs`.
   */
  batchSubmits?: boolean;
  /** Replace global fetch (a proxy agent, a test double). */
  fetch?: FetchLike;
  /** Replace wall-clock time (tests). */
  timers?: Timers;
  random?: () => number;
}

export class Sluice {
  readonly jobs: JobsClient;
  /** Upload a file ahead of the job it goes to; look a blob up by id. */
  readonly blobs: BlobsClient;
  readonly schedules: SchedulesClient;
  private readonly ctx: ClientContext;
  /** One per queue name, so `sluice.queue(name)` called per request still shares a batch. */
  private readonly batchers: Map<string, SubmitBatcher> | undefined;

  constructor(opts: SluiceOptions) {
    if (!/^https?:\/\//.test(opts.url)) throw new TypeError(`Sluice url must start with http:// or https://, got ${JSON.stringify(opts.url)}`);
    if (opts.account !== undefined && !/^\d{12}$/.test(opts.account)) throw new TypeError(`Sluice account must be a 12-digit account id, got ${JSON.stringify(opts.account)}`);
    const timers = opts.timers ?? systemTimers;
    const http = new HttpClient({ url: opts.url, token: opts.token, account: opts.account, fetch: opts.fetch, timers, random: opts.random, backoff: opts.backoff });
    this.ctx = { http, timers, attempts: opts.attempts ?? 5 };
    this.blobs = new BlobsClient(new BlobTransfer(http, this.ctx.attempts));
    this.jobs = new JobsClient(this.ctx, this.blobs);
    this.schedules = new SchedulesClient(this.ctx);
    this.batchers = opts.batchSubmits === false ? undefined : new Map();
  }

  /**
   * Every job's events (one queue's with `queue`), from now on or after `since`, as an async
   * iterable that reconnects by itself and resumes where it was: nothing missed, nothing twice.
   */
  events<I = JsonValue, O = JsonValue>(opts: EventStreamOptions & { queue?: string } = {}): AsyncGenerator<JobEventMessage<I, O>, void, undefined> {
    const { queue, ...rest } = opts;
    return eventStream<I, O>(this.ctx.http, this.ctx.timers, "/v1/events", { queue }, rest, this.blobs.transfer);
  }

  /** The workers seen in the last 60 s, on every node (GET /v1/workers), by workerId. */
  async workers(): Promise<WorkerInfo[]> {
    const res = await this.ctx.http.request<{ workers: WorkerInfo[] }>("GET", "/v1/workers", { maxAttempts: this.ctx.attempts });
    return res.body.workers;
  }

  queue(name: string): QueueClient {
    let batcher: SubmitBatcher | undefined;
    if (this.batchers) {
      batcher = this.batchers.get(name);
      if (!batcher) this.batchers.set(name, (batcher = new SubmitBatcher(this.ctx, name)));
    }
    return new QueueClient(this.ctx, this.jobs, name, batcher);
  }
}
