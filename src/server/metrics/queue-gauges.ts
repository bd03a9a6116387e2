/**
 * Per-queue gauges, computed once per scrape: depth by state, age of the oldest visible message,
 * dead-letter queue depth and the autoscaling advisor's worker count. Each queue costs the store's
 * cheap depth read (docs/operations.md gives the cost with 1 M messages queued); queues past the
 * label limit are summed under one label.
 */
import { Gauge, type Registry } from "prom-client";
import type { QueueRecord } from "../../core/index.js";
import { type QueueLabels, otherQueuesLabel } from "./queue-labels.js";

export interface QueueDepth {
  visible: number;
  inFlight: number;
  delayed: number;
  oldestVisibleSentAtMs?: number;
}

export interface QueueGaugeSources {
  /** Every queue, in name order. */
  queues(): AsyncIterable<QueueRecord>;
  depthOf(queue: QueueRecord): Promise<QueueDepth>;
  /** The name of the queue's dead-letter queue, if it has one. */
  deadLetterQueueOf(queue: QueueRecord): string | undefined;
  /** The advisor's worker count for the queue, given its visible backlog. */
  workersDesired(queue: QueueRecord, visible: number): Promise<number>;
  nowMs(): number;
}

interface Row {
  visible: number;
  inFlight: number;
  delayed: number;
  oldestAgeSeconds?: number;
  dlqMessages?: number;
  workersDesired?: number;
}

const add = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : a + b);

export class QueueGauges {
  private readonly messages: Gauge<"queue" | "state">;
  private readonly oldestAge: Gauge<"queue">;
  private readonly dlq: Gauge<"queue">;
  private readonly workers: Gauge<"queue">;
  private readonly queueCount: Gauge;
  private readonly unlabelled: Gauge;
  private refreshing: Promise<void> | undefined;

  constructor(
    registry: Registry,
    private readonly labels: QueueLabels,
    private readonly sources: QueueGaugeSources,
  ) {
    const registers = [registry];
    this.messages = new Gauge({ name: "sluice_queue_messages", help: "Messages in the queue by state: visible (ready to receive), in_flight (received, not yet deleted), delayed (not visible yet).", labelNames: ["queue", "state"] as const, registers });
    this.oldestAge = new Gauge({ name: "sluice_queue_oldest_message_age_seconds", help: "Age, since its send, of the message at the head of the queue: of the messages visible now, the one visible longest. 0 when none is visible.", labelNames: ["queue"] as const, registers });
    this.dlq = new Gauge({ name: "sluice_queue_dlq_messages", help: "Messages (in any state) in the queue's dead-letter queue; absent for a queue without one.", labelNames: ["queue"] as const, registers });
    this.workers = new Gauge({ name: "sluice_queue_workers_desired", help: "Workers the autoscaling advisor asks for: enough to keep up with arrivals and drain the backlog within the queue's drainTargetSeconds (docs/operations.md).", labelNames: ["queue"] as const, registers });
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
      depths.set(queue.name, await this.sources.depthOf(queue));
    }
    // A dead-letter queue holds what failed: no worker is meant to drain it, so it gets no advice.
    const deadLetterQueues = new Set<string>();
    for (const queue of queues) {
      const dlqName = this.sources.deadLetterQueueOf(queue);
      if (dlqName !== undefined) deadLetterQueues.add(dlqName);
    }
    const rows = new Map<string, Row>();
    let unlabelled = 0;
    for (const queue of queues) {
      const d = depths.get(queue.name)!;
      const label = this.labels.of(queue.name);
      if (label === otherQueuesLabel) unlabelled++;
      const dlqName = this.sources.deadLetterQueueOf(queue);
      const dlqDepth = dlqName === undefined ? undefined : depths.get(dlqName);
      const row: Row = {
        visible: d.visible,
        inFlight: d.inFlight,
        delayed: d.delayed,
        oldestAgeSeconds: d.oldestVisibleSentAtMs === undefined ? 0 : Math.max(0, nowMs - d.oldestVisibleSentAtMs) / 1000,
        dlqMessages: dlqName === undefined ? undefined : dlqDepth ? dlqDepth.visible + dlqDepth.inFlight + dlqDepth.delayed : 0,
        workersDesired: deadLetterQueues.has(queue.name) ? undefined : await this.sources.workersDesired(queue, d.visible),
      };
      const sum = rows.get(label);
      rows.set(
        label,
        sum === undefined
          ? row
          : {
              visible: sum.visible + row.visible,
              inFlight: sum.inFlight + row.inFlight,
              delayed: sum.delayed + row.delayed,
              oldestAgeSeconds: Math.max(sum.oldestAgeSeconds ?? 0, row.oldestAgeSeconds ?? 0),
              dlqMessages: add(sum.dlqMessages, row.dlqMessages),
              workersDesired: add(sum.workersDesired, row.workersDesired),
            },
      );
    }
    // Rebuilt whole: a deleted queue's series disappear.
    for (const gauge of [this.messages, this.oldestAge, this.dlq, this.workers]) gauge.reset();
    for (const [queue, r] of rows) {
      this.messages.set({ queue, state: "visible" }, r.visible);
      this.messages.set({ queue, state: "in_flight" }, r.inFlight);
      this.messages.set({ queue, state: "delayed" }, r.delayed);
      this.oldestAge.set({ queue }, r.oldestAgeSeconds ?? 0);
      if (r.dlqMessages !== undefined) this.dlq.set({ queue }, r.dlqMessages);
      if (r.workersDesired !== undefined) this.workers.set({ queue }, r.workersDesired);
    }
    this.queueCount.set(queues.length);
    this.unlabelled.set(unlabelled);
  }
}
