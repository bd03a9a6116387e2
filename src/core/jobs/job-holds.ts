/**
 * Held requests: a get that waits for its job to end, and a submit that holds its answer until
 * the job ends (`wait`), each woken by the job's own transition through the event hub.
 */
import { limits } from "../limits.js";
import type { JobEventHub } from "./job-events.js";
import { type JobServiceShared, JobServicePart } from "./job-service-shared.js";
import { checkJobInteger } from "../job-settings.js";
import type { JobSubmissions, SubmitResult } from "./job-submissions.js";
import type { SubmitInput } from "./job-validation.js";
import { type JobRecord, type JobTrace, isTerminal } from "../job.js";

/**
 * What a held request is ended early by (the client went away). An AbortSignal is one; the HTTP
 * layer passes a lighter object for submits, whose every held request would otherwise build one.
 */
export interface WaitSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

export class JobHolds extends JobServicePart {
  private readonly pendingWaits = new Set<{ release: (() => void) | undefined }>();

  constructor(
    shared: JobServiceShared,
    private readonly events: JobEventHub,
    private readonly submissions: Pick<JobSubmissions, "create">,
  ) {
    super(shared);
  }

  /** The job once it is terminal, or as it is after `waitSeconds` — woken by the transition itself. */
  async wait(account: string, id: string, waitSeconds: number, signal?: WaitSignal): Promise<JobRecord> {
    checkJobInteger("wait", waitSeconds, 0, limits.jobs.getWaitMaxSeconds);
    if (waitSeconds === 0 || this.shared.isClosed()) return this.shared.get(account, id);
    return (await this.hold(account, id, waitSeconds, signal, () => this.shared.get(account, id)))!;
  }

  /**
   * Submit, then hold the answer until the job is terminal or `waitSeconds` pass (Replicate's
   * `Prefer: wait`): a caller that wants the result gets it in one request. The submit's own
   * result is the job's first state, so the hold costs no store read unless it times out.
   */
  async submitAndWait(account: string, queueName: string, input: SubmitInput, idempotencyKey: string | undefined, waitSeconds: number, signal?: WaitSignal, trace?: JobTrace): Promise<SubmitResult> {
    // Checked first: a bad wait must not submit anything.
    checkJobInteger("wait", waitSeconds, 0, limits.jobs.getWaitMaxSeconds);
    if (waitSeconds === 0 || this.shared.isClosed()) return this.submissions.create(account, queueName, input, idempotencyKey, undefined, trace);
    let submitted: SubmitResult | undefined;
    const job = await this.hold(account, this.ids.messageId(), waitSeconds, signal, async (id) => {
      submitted = await this.submissions.create(account, queueName, input, idempotencyKey, id, trace);
      // A replay names an earlier job, whose events this hold didn't subscribe to: wait on it afresh.
      return submitted.replayed ? undefined : submitted.job;
    });
    if (submitted!.replayed) return { job: await this.wait(account, submitted!.job.id, waitSeconds, signal), replayed: true };
    return { job: job!, replayed: false };
  }

  /**
   * Subscribes to the job's events, then takes its current state from `current` (a read, or the
   * write that created it), so a transition in between can't be missed; then waits for a
   * terminal event, the time limit, `signal`, close(), or the job's deletion with its queue
   * (answered as the limit is: by a read, which then finds no job: JobNotFound). `current`
   * answering undefined ends the hold at once (the caller handles it).
   */
  private async hold(account: string, id: string, waitSeconds: number, signal: WaitSignal | undefined, current: (id: string) => Promise<JobRecord | undefined>): Promise<JobRecord | undefined> {
    let wake!: (job: JobRecord | undefined) => void;
    const woken = new Promise<JobRecord | undefined>((resolve) => (wake = resolve));
    const release = (): void => wake(undefined);
    const unsubscribe = this.events.subscribe(
      { jobId: id },
      (event) => {
        if (isTerminal(event.job.status)) wake(event.job);
      },
      release,
    );
    let timer: { cancel(): void } | undefined;
    const pending = { release: release as (() => void) | undefined };
    try {
      const job = await current(id);
      if (job === undefined || isTerminal(job.status)) return job;
      timer = this.clock.setTimer(waitSeconds * 1000, release);
      signal?.addEventListener("abort", release, { once: true });
      this.pendingWaits.add(pending);
      if (signal?.aborted || this.shared.isClosed()) release();
      return (await woken) ?? (await this.shared.get(account, id));
    } finally {
      unsubscribe();
      timer?.cancel();
      signal?.removeEventListener("abort", release);
      this.pendingWaits.delete(pending);
      pending.release = undefined;
    }
  }

  /** Ends every held wait at once (shutdown). */
  releaseAll(): void {
    for (const pending of [...this.pendingWaits]) pending.release?.();
  }
}
