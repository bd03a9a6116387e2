/**
 * Per-queue gauges, computed once per scrape: depth by state, age of the oldest visible message,
 * dead-letter queue depth and the autoscaling advisor's worker count. Each queue costs the store's
 * cheap depth read (docs/operations.md gives the cost with 1 M messages queued); queues past the
 * label limit are summed under one label, per account. Every account's queues are walked: each
 * series carries its queue's account (queue-labels.ts).
 */
import { Gauge, type Registry } from "prom-client";
import type { QueueRecord } from "../../core/index.js";
import { type QueueLabelSet, type QueueLabels, otherQueuesLabel } from "./queue-labels.js";

export interface QueueDepth {
  visible: number;
  inFlight: number;
  delayed: number;
  oldestVisibleSentAtMs?: number;
}

export interface QueueGaugeSources {
  /** Every queue of every account, each account's in name order. */
  queues(): AsyncIterable<QueueRecord>;
  depthOf(queue: QueueRecord): Promise<QueueDepth>;
  /** The name of the queue's dead-letter queue (in the queue's account), if it has one. */
  deadLetterQueueOf(queue: QueueRecord): string | undefined;
  /** The advisor's worker count for the queue, given its visible backlog. */
  workersDesired(queue: QueueRecord, visible: number): Promise<number>;
  /** Workers of an account seen in the last minute (GET /v1/workers), counted by queue name. */
  workersSeen(account: string): Promise<Map<string, number>>;
  nowMs(): number;
}

interface Row {
  visible: number;
  inFlight: number;
  delayed: number;
  oldestAgeSeconds?: number;
  dlqMessages?: number;
  workersDesired?: number;
  /** Workers seen leasing from it in the last minute. */
  workersSeen: number;
  /** 1 for a paused queue (a sum past the label limit). */
  paused: number;
}

/** One queue's key among every account's: a name is unique only within its account. */
const keyOf = (account: string, name: string): string => `${account}\n${name}`;

const add = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : a + b);

/** Two queues' rows reported under one label (past the label limit). */
function sumOf(a: Row, b: Row): Row {
  return {
    visible: a.visible + b.visible,
    inFlight: a.inFlight + b.inFlight,
    delayed: a.delayed + b.delayed,
    oldestAgeSeconds: Math.max(a.oldestAgeSeconds ?? 0, b.oldestAgeSeconds ?? 0),
    dlqMessages: add(a.dlqMessages, b.dlqMessages),
    workersDesired: add(a.workersDesired, b.workersDesired),
    workersSeen: a.workersSeen + b.workersSeen,
    paused: a.paused + b.paused,
  };
}

export class QueueGauges {
  private readonly messages: Gauge<"account" | "queue" | "state">;
  private readonly oldestAge: Gauge<"account" | "queue">;
  private readonly dlq: Gauge<"account" | "queue">;
  private readonly workers: Gauge<"account" | "queue">;
  private readonly paused: Gauge<"account" | "queue">;
  private readonly workersSeen: Gauge<"account" | "queue">;
  private readonly queueCount: Gauge;
  private readonly unlabelled: Gauge;
  private refreshing: Promise<void> | undefined;

  constructor(
    registry: Registry,
    private readonly labels: QueueLabels,
    private readonly sources: QueueGaugeSources,
  ) {
    const registers = [registry];
    this.messages = new Gauge({ name: "sluice_queue_messages", help: "Messages in the queue by state: visible (ready to receive), in_flight (received, not yet deleted), delayed (not visible yet).", labelNames: ["account", "queue", "state"] as const, registers });
    this.oldestAge = new Gauge({ name: "sluice_queue_oldest_message_age_seconds", help: "Age, since its send, of the message at the head of the queue: of the messages visible now, the one visible longest. 0 when none is visible.", labelNames: ["account", "queue"] as const, registers });
    this.dlq = new Gauge({ name: "sluice_queue_dlq_messages", help: "Messages (in any state) in the queue's dead-letter queue; absent for a queue without one.", labelNames: ["account", "queue"] as const, registers });
    this.workers = new Gauge({ name: "sluice_queue_workers_desired", help: "Workers the autoscaling advisor asks for: enough to keep up with arrivals and drain the backlog within the queue's drainTargetSeconds (docs/operations.md).", labelNames: ["account", "queue"] as const, registers });
    this.paused = new Gauge({ name: "sluice_queue_paused", help: "1 while the queue is paused (leases and receives return nothing), else 0; past the label limit, how many of the summed queues are.", labelNames: ["account", "queue"] as const, registers });
    this.workersSeen = new Gauge({ name: "sluice_workers", help: "Workers seen leasing from the queue in the last minute, on any node (GET /v1/workers: those that send a workerId).", labelNames: ["account", "queue"] as const, registers });
    this.queueCount = new Gauge({ name: "sluice_queues", help: "Queues that exist.", registers });
    this.unlabelled = new Gauge({ name: "sluice_metrics_queues_unlabelled", help: `Queues past the label limit, whose numbers are summed under queue="${otherQueuesLabel}".`, registers });
  }

  /** Recomputes every gauge; concurrent scrapes share one pass. */
  refresh(): Promise<void> {
    this.refreshing ??= this.pass().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async pass(): Promise<void> {
    const nowMs = this.sources.nowMs();
    const depths = new Map<string, QueueDepth>();
    const queues: QueueRecord[] = [];
    for await (const queue of this.sources.queues()) {
      queues.push(queue);
      depths.set(keyOf(queue.account, queue.name), await this.sources.depthOf(queue));
    }
    // A dead-letter queue holds what failed: no worker is meant to drain it, so it gets no advice.
    const deadLetterQueues = new Set<string>();
    for (const queue of queues) {
      const dlqName = this.sources.deadLetterQueueOf(queue);
      if (dlqName !== undefined) deadLetterQueues.add(keyOf(queue.account, dlqName));
    }
    // One read of the workers list per account, not per queue.
    const seen = new Map<string, Map<string, number>>();
    for (const account of new Set(queues.map((q) => q.account))) seen.set(account, await this.sources.workersSeen(account));
    const rows = new Map<string, { labels: QueueLabelSet; row: Row }>();
    let unlabelled = 0;
    for (const queue of queues) {
      const key = keyOf(queue.account, queue.name);
      const d = depths.get(key)!;
      const labels = this.labels.of(queue.account, queue.name);
      if (labels.queue === otherQueuesLabel) unlabelled++;
      const dlqName = this.sources.deadLetterQueueOf(queue);
      const dlqDepth = dlqName === undefined ? undefined : depths.get(keyOf(queue.account, dlqName));
      const row: Row = {
        visible: d.visible,
        inFlight: d.inFlight,
        delayed: d.delayed,
        oldestAgeSeconds: d.oldestVisibleSentAtMs === undefined ? 0 : Math.max(0, nowMs - d.oldestVisibleSentAtMs) / 1000,
        dlqMessages: dlqName === undefined ? undefined : dlqDepth ? dlqDepth.visible + dlqDepth.inFlight + dlqDepth.delayed : 0,
        workersDesired: deadLetterQueues.has(key) ? undefined : await this.sources.workersDesired(queue, d.visible),
        workersSeen: seen.get(queue.account)?.get(queue.name) ?? 0,
        paused: queue.config.paused === true ? 1 : 0,
      };
      const labelKey = keyOf(labels.account, labels.queue);
      const sum = rows.get(labelKey)?.row;
      rows.set(labelKey, { labels, row: sum === undefined ? row : sumOf(sum, row) });
    }
    // Rebuilt whole: a deleted queue's series disappear.
    for (const gauge of [this.messages, this.oldestAge, this.dlq, this.workers, this.paused, this.workersSeen]) gauge.reset();
    for (const { labels, row: r } of rows.values()) {
      this.messages.set({ ...labels, state: "visible" }, r.visible);
      this.messages.set({ ...labels, state: "in_flight" }, r.inFlight);
      this.messages.set({ ...labels, state: "delayed" }, r.delayed);
      this.oldestAge.set(labels, r.oldestAgeSeconds ?? 0);
      this.paused.set(labels, r.paused);
      this.workersSeen.set(labels, r.workersSeen);
      if (r.dlqMessages !== undefined) this.dlq.set(labels, r.dlqMessages);
      if (r.workersDesired !== undefined) this.workers.set(labels, r.workersDesired);
    }
    this.queueCount.set(queues.length);
    this.unlabelled.set(unlabelled);
  }
}
