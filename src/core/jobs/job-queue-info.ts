/** What `GET /v1/queues/{queue}` shows: a job queue's settings and live numbers. */
import type { QueueThroughput } from "../queue-activity.js";
import type { QueueConfig } from "../queue.js";
import type { QueueStats } from "../store.js";
import type { JobQueuePolicy } from "./job-queues.js";
import type { JobQueueSettings } from "../job-settings.js";
import type { JobStatus } from "../job.js";

export interface JobQueueInfo {
  name: string;
  /** The queue's account ("" is the server's own). */
  account: string;
  deadLetterQueue?: string;
  /** The queue's SQS attributes. */
  config: QueueConfig;
  settings: JobQueueSettings;
  stats: {
    jobs: Record<JobStatus, number>;
    messages: { visible: number; inFlight: number; delayed: number };
    deadLetterMessages?: number;
    oldestVisibleAgeSeconds?: number;
    throughput: QueueThroughput;
  };
  createdAtMs: number;
}

export function queueInfoOf(p: {
  policy: JobQueuePolicy;
  jobCounts: Record<JobStatus, number>;
  messages: QueueStats;
  deadLetterStats?: QueueStats;
  throughput: QueueThroughput;
  nowMs: number;
}): JobQueueInfo {
  const { queue, settings, deadLetter } = p.policy;
  const d = p.deadLetterStats;
  return {
    name: queue.name,
    account: queue.account,
    deadLetterQueue: deadLetter?.name,
    config: queue.config,
    settings,
    stats: {
      jobs: p.jobCounts,
      messages: { visible: p.messages.visible, inFlight: p.messages.inFlight, delayed: p.messages.delayed },
      deadLetterMessages: d ? d.visible + d.inFlight + d.delayed : undefined,
      oldestVisibleAgeSeconds: p.messages.oldestVisibleSentAtMs === undefined ? undefined : Math.max(0, Math.floor((p.nowMs - p.messages.oldestVisibleSentAtMs) / 1000)),
      throughput: p.throughput,
    },
    createdAtMs: queue.createdAtMs,
  };
}
