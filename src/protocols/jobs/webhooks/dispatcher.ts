/**
 * Delivers the webhook outbox. Woken at once when a transition wrote outbox rows (a job event of a
 * job with a webhook), and otherwise by a timer set to the next due retry on the injected clock —
 * never a polling loop. Deliveries are claimed in the store first, so they survive a crash
 * mid-attempt, and pending ones are picked up again after a restart.
 */
import { type Clock, type TimerHandle, type JobService, type WebhookDelivery, webhookRetry } from "../../../core/index.js";
import { webhookPayloadJson } from "../wire.js";
import { type SendOutcome, postWebhook } from "./sender.js";
import { signWebhook, webhookSecretKey } from "./signer.js";
import type { WebhookUrlPolicy } from "./url-policy.js";

/** One delivery attempt as the server's logs and metrics see it: no URL path or query (they may hold a secret), no body. */
export interface WebhookAttemptReport {
  outcome: "delivered" | "retrying" | "gaveUp";
  deliveryId: string;
  jobId: string;
  queue: string;
  /** The job's account as the store names it: "" for the server's own (JobRecord.account). */
  account: string;
  event: string;
  /** The receiver's host only. */
  host: string;
  /** Attempts made so far, this one included. */
  attempts: number;
  statusCode?: number;
  error?: string;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(invalid URL)";
  }
}

export interface WebhookDispatcherDeps {
  jobs: JobService;
  clock: Clock;
  /** The server's `whsec_…` secret: signs the webhooks of every account that has none of its own. */
  secret: string;
  /**
   * An account's own secret (the credentials file's `[[accounts]] webhookSecret`), read at each
   * delivery so a reload takes effect at once; `account` is the job's (JobRecord.account, "" for
   * the server's own). Undefined: the server's secret.
   */
  accountSecret?: (account: string) => string | undefined;
  policy: WebhookUrlPolicy;
  onError: (err: unknown) => void;
  /** Replaceable in tests; defaults to a real HTTP POST. */
  send?: typeof postWebhook;
  /** Deliveries in flight at once. */
  concurrency?: number;
  /** Told of every recorded attempt (logs and metrics). */
  onAttempt?: (report: WebhookAttemptReport) => void;
}

/** Even with nothing due, look again this often (rows another node wrote, a clock jump). */
const idleRecheckMs = 30_000;
/** After a failed claim, wait at least this long: a broken database is not retried in a hot loop. */
const claimErrorBackoffMs = 1_000;

/**
 * Up to `concurrency` deliveries are in flight at once, and each slot is refilled as soon as it
 * frees (or a kick arrives): a receiver that hangs until the attempt's time limit holds one slot,
 * never the deliveries to everyone else.
 */
export class WebhookDispatcher {
  private readonly key: Buffer;
  /** Accounts' signing keys by secret: decoded once each, whatever reloads bring. */
  private readonly accountKeys = new Map<string, Buffer>();
  private readonly send: typeof postWebhook;
  private readonly concurrency: number;
  private timer: TimerHandle | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /** One claim at a time, so two never count the same free slots. */
  private claiming: Promise<void> | undefined;
  /** Something may be due and unclaimed: a kick or timer came, or the last claim filled every slot it asked for. */
  private maybeDue = false;
  private claimFailed = false;
  /** Bumped whenever a claim starts or a timer is looked up: a stale lookup must not set a timer. */
  private scheduleGeneration = 0;
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

  /** Claims what is due now, into the free slots (or as soon as the claim in progress ends). */
  kick(): void {
    if (this.stopped) return;
    this.maybeDue = true;
    this.pump();
  }

  /** Waits until no claim and no delivery is in progress: for tests that need every due delivery attempted. */
  async idle(): Promise<void> {
    while (this.claiming || this.inFlight.size > 0) await Promise.all([this.claiming, ...this.inFlight]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    this.timer?.cancel();
    this.stopping.abort();
    await this.idle();
  }

  /** Runs whenever something changed: a kick, a claim ended, a delivery settled. */
  private pump(): void {
    if (this.stopped || this.claiming) return;
    if (!this.maybeDue) {
      // Nothing known to be due: a retry coming due is the timer's to catch.
      this.scheduleNext();
      return;
    }
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return; // the next delivery to settle pumps again
    this.maybeDue = false;
    this.timer?.cancel();
    this.timer = undefined;
    this.scheduleGeneration++;
    this.claiming = this.claim(free).finally(() => {
      this.claiming = undefined;
      this.pump();
    });
  }

  private async claim(limit: number): Promise<void> {
    let due: WebhookDelivery[];
    try {
      due = await this.deps.jobs.claimWebhookDeliveries(limit);
    } catch (err) {
      this.claimFailed = true;
      this.deps.onError(err);
      return;
    }
    // Stopped meanwhile: leave them claimed; the claim lapses and a restart retries them.
    if (this.stopped) return;
    // A full answer may have left more behind.
    if (due.length === limit) this.maybeDue = true;
    for (const d of due) {
      const attempt: Promise<void> = this.deliver(d)
        .catch(this.deps.onError)
        .finally(() => {
          this.inFlight.delete(attempt);
          this.pump();
        });
      this.inFlight.add(attempt);
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
        headers: { ...signWebhook(this.keyFor(d), d.id, timestampSeconds, body) },
        timeoutMs: webhookRetry.attemptTimeoutMs,
        policy: this.deps.policy,
        signal: this.stopping.signal,
      });
    } catch (err) {
      outcome = { delivered: false, error: err instanceof Error ? err.message : String(err) };
    }
    if (this.stopping.signal.aborted && !outcome.delivered) return;
    const result = await this.deps.jobs.recordWebhookAttempt(d, outcome);
    this.deps.onAttempt?.({
      outcome: result,
      deliveryId: d.id,
      jobId: d.jobId,
      queue: d.job.queueName,
      account: d.job.account ?? "",
      event: d.event,
      host: hostOf(d.url),
      attempts: d.attempts + 1,
      statusCode: outcome.statusCode,
      error: outcome.error,
    });
  }

  /** The key that signs a delivery: its job's account's secret, or the server's. */
  private keyFor(d: WebhookDelivery): Buffer {
    const secret = this.deps.accountSecret?.(d.job.account ?? "");
    if (secret === undefined) return this.key;
    let key = this.accountKeys.get(secret);
    if (!key) {
      // A small, bounded set in practice (one per account); a reload that replaced many is forgotten here.
      if (this.accountKeys.size >= 1_000) this.accountKeys.clear();
      this.accountKeys.set(secret, (key = webhookSecretKey(secret)));
    }
    return key;
  }

  private scheduleNext(): void {
    const generation = ++this.scheduleGeneration;
    const minDelayMs = this.claimFailed ? claimErrorBackoffMs : 0;
    this.claimFailed = false;
    this.deps.jobs.nextWebhookDueAtMs().then((nextDueAtMs) => {
      if (this.stopped || generation !== this.scheduleGeneration) return;
      const dueInMs = nextDueAtMs === undefined ? idleRecheckMs : Math.min(idleRecheckMs, Math.max(0, nextDueAtMs - this.deps.clock.nowMs()));
      this.timer?.cancel();
      this.timer = this.deps.clock.setTimer(Math.max(minDelayMs, dueInMs), () => this.kick());
    }, this.deps.onError);
  }
}
