/**
 * The worker's two kinds of `POST /v1/queues/{queue}/leases`: a long poll for jobs, and a request
 * reporting finished jobs (acks) that asks for their replacements without waiting.
 */
import type { BatchOptions } from "./handlers.js";
import type { HttpClient, HttpResponse } from "./http.js";
import { longPollGraceMs } from "./jobs.js";
import { queuePath } from "./paths.js";
import type { CompleteAck, FailAck, LeaseRequest, LeaseResponse, LeasedJob } from "./wire.js";

export interface LeaseRequestsOptions {
  waitSeconds: number;
  leaseSeconds: number;
  batch?: BatchOptions;
  /** Sent with every lease request, the acks' included (they lease replacements). */
  labels?: Record<string, string>;
  workerId: string;
}

export class LeaseRequests {
  private readonly path: string;

  constructor(
    private readonly http: HttpClient,
    queue: string,
    private readonly opts: LeaseRequestsOptions,
  ) {
    this.path = `${queuePath(queue)}/leases`;
  }

  /** Long-polls for up to `free` jobs (a batch handler: a whole batch); `signal` ends the poll. */
  async lease(free: number, signal: AbortSignal): Promise<LeasedJob[]> {
    const { batch, waitSeconds, leaseSeconds } = this.opts;
    const body: LeaseRequest = {
      max: batch ? batch.size : Math.min(free, 100),
      waitSeconds,
      leaseSeconds,
      ...(batch ? { batchWindowMs: batch.windowMs } : {}),
      ...this.identity(),
    };
    const res = await this.http.request<LeaseResponse>("POST", this.path, {
      body,
      signal,
      timeoutMs: waitSeconds * 1000 + (batch?.windowMs ?? 0) + longPollGraceMs,
    });
    return res.body.jobs;
  }

  private identity(): Pick<LeaseRequest, "labels" | "workerId"> {
    return this.opts.labels === undefined ? { workerId: this.opts.workerId } : { labels: this.opts.labels, workerId: this.opts.workerId };
  }

  /**
   * Reports these acks (the server answers `results` in this order: complete entries first) and
   * leases up to `max` jobs, without waiting for any.
   */
  ack(max: number, complete: CompleteAck[], fail: FailAck[]): Promise<HttpResponse<LeaseResponse>> {
    const body: LeaseRequest = { max, waitSeconds: 0, leaseSeconds: this.opts.leaseSeconds, ...this.identity(), complete, fail };
    return this.http.request<LeaseResponse>("POST", this.path, { body, timeoutMs: longPollGraceMs });
  }
}
