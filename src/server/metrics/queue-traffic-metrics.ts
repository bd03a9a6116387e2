/** Message traffic per queue (sends, receives, deletes, dead-lettered), from core's QueueObserver. */
import { Counter, type Registry } from "prom-client";
import type { QueueObserver } from "../../core/index.js";
import type { QueueLabels } from "./queue-labels.js";

export type QueueTrafficObserver = Required<Pick<QueueObserver, "messagesSent" | "messagesReceived" | "messagesDeleted" | "messagesDeadLettered">>;

export function queueTrafficMetrics(registry: Registry, labels: QueueLabels): QueueTrafficObserver {
  const counter = (name: string, help: string): Counter<"account" | "queue"> => new Counter({ name, help, labelNames: ["account", "queue"] as const, registers: [registry] });
  const sent = counter("sluice_queue_messages_sent_total", "Messages enqueued through the SQS API (FIFO duplicates excluded; job submits count in sluice_jobs_total).");
  const received = counter("sluice_queue_messages_received_total", "Messages delivered by receives through the SQS API.");
  const deleted = counter("sluice_queue_messages_deleted_total", "Messages deleted by receipt handle through the SQS API (stale handles delete nothing and are not counted).");
  const deadLettered = counter("sluice_queue_messages_dead_lettered_total", "Messages a receive moved to the queue's dead-letter queue (received maxReceiveCount times). Jobs that failed their last attempt count in sluice_jobs_total{outcome=\"failed\"}.");
  return {
    messagesSent: (queue, n) => sent.inc(labels.of(queue.account, queue.name), n),
    messagesReceived: (queue, n) => received.inc(labels.of(queue.account, queue.name), n),
    messagesDeleted: (queue, n) => deleted.inc(labels.of(queue.account, queue.name), n),
    messagesDeadLettered: (queue, n) => deadLettered.inc(labels.of(queue.account, queue.name), n),
  };
}
