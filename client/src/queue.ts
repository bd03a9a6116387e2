/**
 * `sluice.queue(name)`: submit jobs to one queue, list them, and run workers on it.
 */
import { JobHandle } from "./job-handle.js";
import type { ClientContext, JobPage, JobsClient, ListOptions } from "./jobs.js";
import { type BatchHandler, type BatchOptions, type ErasedHandler, type JobHandler, Worker, type WorkerOptions } from "./worker.js";
import type { JobResponse, JsonValue, SubmitRequest, WebhookSpec } from "./wire.js";

export interface SubmitOptions {
  /**
   * Makes the submit safe to repeat: the same key and body give back the same job. When omitted
   * the SDK sends a random key of its own, so its own retries after a dropped connection never
   * create a second job (as Stripe's SDKs do).
   */
  idempotencyKey?: string;
  /** 0–9, higher first. */
  priority?: number;
  delaySeconds?: number;
  timeoutSeconds?: number;
  maxAttempts?: number;
  webhook?: WebhookSpec;
  metadata?: Record<string, JsonValue>;
}

export class QueueClient {
  constructor(
    private readonly ctx: ClientContext,
    private readonly jobs: JobsClient,
    readonly name: string,
  ) {}

  async submit<I = JsonValue, O = JsonValue>(input: I, opts: SubmitOptions = {}): Promise<JobHandle<I, O>> {
    const { idempotencyKey, ...rest } = opts;
    const body: SubmitRequest<I> = { input, ...definedOnly(rest) };
    const res = await this.ctx.http.request<JobResponse<I, O>>("POST", `/v1/queues/${encodeURIComponent(this.name)}/jobs`, {
      body,
      headers: { "idempotency-key": idempotencyKey ?? `sdk-${globalThis.crypto.randomUUID()}` },
      maxAttempts: this.ctx.attempts,
    });
    return new JobHandle<I, O>(this.jobs, res.body.job, res.status === 200);
  }

  list<I = JsonValue, O = JsonValue>(opts?: ListOptions): Promise<JobPage<I, O>> {
    return this.jobs.list<I, O>(this.name, opts);
  }

  /**
   * Starts a worker on this queue at once. With `batch`, the handler gets an array of jobs and
   * returns one result per job; without, it gets one job and returns its output.
   */
  work<I = JsonValue, O = JsonValue>(handler: BatchHandler<I, O>, opts: WorkerOptions & { batch: BatchOptions }): Worker;
  work<I = JsonValue, O = JsonValue>(handler: JobHandler<I, O>, opts?: WorkerOptions & { batch?: undefined }): Worker;
  work<I = JsonValue, O = JsonValue>(handler: JobHandler<I, O> | BatchHandler<I, O>, opts: WorkerOptions = {}): Worker {
    // The job's input arrives as JSON; the caller's I is their promise about its shape.
    const erased: ErasedHandler = opts.batch ? { batch: handler as unknown as BatchHandler } : { one: handler as unknown as JobHandler<JsonValue, unknown> };
    return new Worker(this.ctx.http, this.name, erased, opts, this.ctx.timers);
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
