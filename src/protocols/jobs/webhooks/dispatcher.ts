/**
 * Delivers the webhook outbox. Woken at once when a transition wrote outbox rows (a job event of a
 * job with a webhook), and otherwise by a timer set to the next due retry on the injected clock —
 * never a polling loop. Deliveries are claimed in the store first, so they survive a crash
 * mid-attempt, and pending ones are picked up again after a restart.
 */
import type { Clock, TimerHandle } from "../../../core/clock.js";
import type { JobService } from "../../../core/jobs/job-service.js";
import type { WebhookDelivery } from "../../../core/jobs/job-store.js";
import { webhookRetry } from "../../../core/jobs/webhook-schedule.js";
import { webhookPayloadJson } from "../wire.js";
import { type SendOutcome, postWebhook } from "./sender.js";
import { signWebhook, webhookSecretKey } from "./signer.js";
import type { WebhookUrlPolicy } from "./url-policy.js";

export interface WebhookDispatcherDeps {
  jobs: JobService;
  clock: Clock;
  secret: string;
  policy: WebhookUrlPolicy;
  onError: (err: unknown) => void;
  /** Replaceable in tests; defaults to a real HTTP POST. */
  send?: typeof postWebhook;
  /** Deliveries in flight at once. */
  concurrency?: number;
}

/** Even with nothing due, look again this often (rows another node wrote, a clock jump). */
const idleRecheckMs = 30_000;

export class WebhookDispatcher {
  private readonly key: Buffer;
  private readonly send: typeof postWebhook;
  private readonly concurrency: number;
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Cuts in-flight attempts at stop: unrecorded, their claim lapses and they are retried after a restart. */
  private readonly stopping = new AbortController();
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: WebhookDispatcherDeps) {
    this.key = webhookSecretKey(deps.secret);
    this.send = deps.send ?? postWebhook;
    this.concurrency = deps.concurrency ?? 16;
    this.unsubscribe = deps.jobs.events.subscribe({}, (event) => {
      if (event.job.webhook && (event.job.webhook.events as readonly string[]).includes(event.type)) this.kick();
    });
  }

  start(): void {
    this.kick();
  }

  /** Runs a pass now (or right after the one in progress). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.timer?.cancel();
    this.timer = undefined;
    this.running = this.pass()
      .catch(this.deps.onError)
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        } else {
          void this.scheduleNext().catch(this.deps.onError);
        }
      });
  }

  /** Waits for the pass in progress: for tests that need every due delivery attempted. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    this.timer?.cancel();
    this.stopping.abort();
    await this.running;
  }

  private async pass(): Promise<void> {
    for (;;) {
      const due = await this.deps.jobs.claimWebhookDeliveries(this.concurrency);
      await Promise.all(due.map((d) => this.deliver(d)));
      if (due.length < this.concurrency || this.stopped) return;
    }
  }

  private async deliver(d: WebhookDelivery): Promise<void> {
    const body = webhookPayloadJson(d);
    const timestampSeconds = Math.floor(this.deps.clock.nowMs() / 1000);
    let outcome: SendOutcome;
    try {
      outcome = await this.send({
        url: d.url,
        body,
        headers: { ...signWebhook(this.key, d.id, timestampSeconds, body) },
        timeoutMs: webhookRetry.attemptTimeoutMs,
        policy: this.deps.policy,
        signal: this.stopping.signal,
      });
    } catch (err) {
      outcome = { delivered: false, error: err instanceof Error ? err.message : String(err) };
    }
    if (this.stopping.signal.aborted && !outcome.delivered) return;
    await this.deps.jobs.recordWebhookAttempt(d, outcome);
  }

  private async scheduleNext(): Promise<void> {
    if (this.stopped || this.running) return;
    const nextDueAtMs = await this.deps.jobs.nextWebhookDueAtMs();
    if (this.stopped || this.running) return;
    const delayMs = nextDueAtMs === undefined ? idleRecheckMs : Math.min(idleRecheckMs, Math.max(0, nextDueAtMs - this.deps.clock.nowMs()));
    this.timer?.cancel();
    this.timer = this.deps.clock.setTimer(delayMs, () => this.kick());
  }
}
