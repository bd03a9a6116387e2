/**
 * Dead-letter queues: checking a RedrivePolicy against its target (exists, same queue type, its
 * RedriveAllowPolicy admits the source), resolving the target on receive, and finding a DLQ's
 * source queues. Queues are named by name (the SQS layer turns its ARNs into names and back).
 */
import { type ErrorSubject, checkInteger, fail } from "./errors.js";
import { limits } from "./limits.js";
import type { QueueConfig, QueueRecord, RedrivePolicy } from "./queue.js";
import type { DeadLetterTarget } from "./store.js";

export type QueueLookup = (name: string) => Promise<QueueRecord | undefined>;

type PolicyProblem = Extract<ErrorSubject, { kind: "deadLetterQueue" }>["problem"];

function invalidPolicy(policy: RedrivePolicy, fifoSource: boolean, problem: PolicyProblem, message: string): never {
  const { deadLetterQueueName, maxReceiveCount } = policy;
  fail("InvalidParameterValue", message, { kind: "deadLetterQueue", problem, deadLetterQueueName, maxReceiveCount, fifoSource });
}

/**
 * Checks a queue's RedrivePolicy when it is created or changed: the target must exist, be of the
 * same type (FIFO → FIFO, standard → standard) and, through its RedriveAllowPolicy, accept this
 * queue as a source.
 */
export async function checkRedrivePolicy(sourceName: string, config: QueueConfig, lookup: QueueLookup): Promise<void> {
  const policy = config.redrivePolicy;
  if (!policy) return;
  const fifo = config.fifoQueue;
  const target = await lookup(policy.deadLetterQueueName);
  if (!target) invalidPolicy(policy, fifo, "missing", `The dead-letter queue ${policy.deadLetterQueueName} does not exist.`);
  if (target.config.fifoQueue !== fifo) {
    invalidPolicy(policy, fifo, "otherType", fifo ? "The dead-letter queue of a FIFO queue must be a FIFO queue." : "The dead-letter queue of a standard queue must be a standard queue.");
  }
  const allow = target.config.redriveAllowPolicy;
  if (!allow || allow.redrivePermission === "allowAll") return;
  const admitted = allow.redrivePermission === "byQueue" && (allow.sourceQueueNames ?? []).includes(sourceName);
  if (!admitted) invalidPolicy(policy, fifo, "notAllowed", `The RedriveAllowPolicy of ${target.name} does not allow this queue to use it as a dead-letter queue.`);
}

/** Where this queue's receives dead-letter to, or undefined (no policy, or the target is gone). */
export async function deadLetterTargetFor(queue: QueueRecord, lookup: QueueLookup): Promise<DeadLetterTarget | undefined> {
  const policy = queue.config.redrivePolicy;
  if (!policy) return undefined;
  const target = await lookup(policy.deadLetterQueueName);
  // A deleted DLQ stops dead-lettering rather than losing messages (SQS keeps them in the source too).
  if (!target || target.id === queue.id) return undefined;
  return { queueId: target.id, maxReceiveCount: policy.maxReceiveCount, sourceQueueName: queue.name };
}

export function isDeadLetterSourceOf(queue: QueueRecord, deadLetterQueueName: string): boolean {
  const policy = queue.config.redrivePolicy;
  return policy !== undefined && policy.deadLetterQueueName === deadLetterQueueName;
}

/** The part of QueueService this module needs (keeps the dependency one-way). */
export interface QueueDirectory {
  getQueue(name: string): Promise<QueueRecord>;
  listQueues(p: { maxResults?: number; afterName?: string }): Promise<{ queues: QueueRecord[]; hasMore: boolean }>;
}

/**
 * The queues whose RedrivePolicy names `name`, in name order, after `afterName` when paging.
 * Scans the queue list: queues are few and configs are in memory-sized rows; no index needed.
 */
export async function listDeadLetterSourceQueues(
  queues: QueueDirectory,
  name: string,
  p: { maxResults?: number; afterName?: string } = {},
): Promise<{ queues: QueueRecord[]; hasMore: boolean }> {
  await queues.getQueue(name);
  const limit = p.maxResults ?? limits.listDeadLetterSourceQueuesMaxResults;
  checkInteger("maxResults", limit, 1, limits.listDeadLetterSourceQueuesMaxResults, "deadLetterSourcesLimit");
  const found: QueueRecord[] = [];
  let afterName = p.afterName;
  for (;;) {
    const page = await queues.listQueues({ maxResults: limits.listQueuesMaxResults, afterName });
    for (const queue of page.queues) {
      if (!isDeadLetterSourceOf(queue, name)) continue;
      found.push(queue);
      if (found.length > limit) return { queues: found.slice(0, limit), hasMore: true };
    }
    if (!page.hasMore || page.queues.length === 0) return { queues: found, hasMore: false };
    afterName = page.queues[page.queues.length - 1]!.name;
  }
}

/** Whether some queue uses `name` as its dead-letter queue. */
export async function isDeadLetterQueue(queues: QueueDirectory, name: string): Promise<boolean> {
  return (await listDeadLetterSourceQueues(queues, name, { maxResults: 1 })).queues.length > 0;
}
