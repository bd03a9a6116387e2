/**
 * What `queue.submit()` returns: the new job's id and snapshot, with get / wait / cancel bound to it.
 */
import type { StreamOptions } from "./job-stream.js";
import type { JobsClient, WaitOptions } from "./jobs.js";
import type { Job, JsonValue } from "./wire.js";

export class JobHandle<I = JsonValue, O = JsonValue> {
  readonly id: string;
  readonly queue: string;

  constructor(
    private readonly jobs: JobsClient,
    /** The job as the submit answered it. */
    readonly job: Job<I, O>,
    /** True when the Idempotency-Key matched an earlier submit and this is that same job. */
    readonly replayed: boolean,
  ) {
    this.id = job.id;
    this.queue = job.queue;
  }

  get(): Promise<Job<I, O>> {
    return this.jobs.get<I, O>(this.id);
  }

  wait(opts?: WaitOptions): Promise<Job<I, O>> {
    return this.jobs.wait<I, O>(this.id, opts);
  }

  cancel(): Promise<Job<I, O>> {
    return this.jobs.cancel<I, O>(this.id);
  }

  /** `for await (const chunk of job.stream())`: the job's streamed output until it ends (JobsClient.stream). */
  stream<Chunk = JsonValue>(opts?: StreamOptions): AsyncGenerator<Chunk, void, undefined> {
    return this.jobs.stream<Chunk>(this.id, opts);
  }
}
