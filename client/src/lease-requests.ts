/**
 * The worker's two kinds of `POST /v1/queues/{queue}/leases`: a long poll for jobs, and a request
 * reporting finished jobs (acks) that asks for their replacements without waiting.
 */
import type { BatchOptions } from "./handlers.js";
import type { HttpClient, HttpResponse } from "./http.js";
import { longPollGraceMs } from "./jobs.js";
import { isWorkerIdUnknownError } from "./lease-errors.js";
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
    const res = await this.withIdentity((identity) => {
      const body: LeaseRequest = {
        max: batch ? batch.size : Math.min(free, 100),
        waitSeconds,
        leaseSeconds,
        ...(batch ? { batchWindowMs: batch.windowMs } : {}),
        ...identity,
      };
      return this.http.request<LeaseResponse>("POST", this.path, { body, signal, timeoutMs: waitSeconds * 1000 + (batch?.windowMs ?? 0) + longPollGraceMs });
    });
    return res.body.jobs;
  }

  /** Whether the server takes `workerId` (one from before the workers list refuses it as unknown). */
  private workerIdTaken = true;

  private identity(): Pick<LeaseRequest, "labels" | "workerId"> {
    return {
      ...(this.opts.labels === undefined ? {} : { labels: this.opts.labels }),
      ...(this.workerIdTaken ? { workerId: this.opts.workerId } : {}),
    };
  }

  /**
   * Sends a request with the worker's labels and id; a server that refuses `workerId` as an
   * unknown field (it predates the workers list) gets the request again without it, and never
   * again with it. Labels it refuses stay an error: it could not route by them.
   */
  private async withIdentity<T>(send: (identity: Pick<LeaseRequest, "labels" | "workerId">) => Promise<T>): Promise<T> {
    try {
      return await send(this.identity());
    } catch (err) {
      if (!this.workerIdTaken || !isWorkerIdUnknownError(err)) throw err;
      this.workerIdTaken = false;
      return send(this.identity());
    }
  }

  /**
   * Reports these acks (the server answers `results` in this order: complete entries first) and
   * leases up to `max` jobs, without waiting for any.
   */
  ack(max: number, complete: CompleteAck[], fail: FailAck[]): Promise<HttpResponse<LeaseResponse>> {
    return this.withIdentity((identity) => {
      const body: LeaseRequest = { max, waitSeconds: 0, leaseSeconds: this.opts.leaseSeconds, ...identity, complete, fail };
      return this.http.request<LeaseResponse>("POST", this.path, { body, timeoutMs: longPollGraceMs });
    });
  }
}
