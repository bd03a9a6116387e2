/**
 * What the parts of the jobs service share (job-service.ts is their one public face; the parts are
 * job-submissions.ts, job-leasing.ts, job-holds.ts, job-upkeep.ts and job-notices.ts): their
 * dependencies, the queue cache, the parked leases, and how a committed change is told.
 */
import type { Clock } from "../clock.js";
import { SluiceError } from "../errors.js";
import type { IdSource } from "../ids.js";
import type { QueueService } from "../queue-service.js";
import type { Store } from "../store.js";
import type { JobEventLog } from "../job-event-log.js";
import type { JobQueues } from "./job-queues.js";
import type { JobChange, JobStore } from "../job-store.js";
import type { JobRecord } from "../job.js";
import type { ParkedLeases } from "./parked-leases.js";
import type { WorkerStore } from "../worker-store.js";
import type { WorkerRegistry } from "./worker-registry.js";
import type { BlobService } from "../blobs/blob-service.js";

export type JobServiceStore = JobStore & JobEventLog & WorkerStore & Pick<Store, "messageNextVisibleAt" | "notifier">;

export interface JobServiceShared {
  store: JobServiceStore;
  queues: QueueService;
  clock: Clock;
  ids: IdSource;
  /** The sender id of job messages (SenderId on the SQS face). */
  senderId: string;
  /** Uniform in [0, 1): backoff jitter. */
  random: () => number;
  jobQueues: JobQueues;
  /** Long-polling leases a submit may run inside its own write (parked-leases.ts). */
  parked: ParkedLeases;
  /** Workers seen by their lease requests (GET /v1/workers). */
  workers: WorkerRegistry;
  /** Attachments' blobs; absent: a submit or complete that names attachments is refused. */
  blobs?: BlobService;
  /** Tells every node (Store.notifier) of a transition that committed. */
  publish(change: JobChange): void;
  /** The job, or JobNotFound (also when it is another account's than `account`: JobService.get). */
  get(account: string, id: string): Promise<JobRecord>;
  /** close() was called: loops end, nothing new is held. */
  isClosed(): boolean;
}

/** The blob service, or ValidationFailed naming `field` when this server keeps no attachments. */
export function blobsFor(shared: JobServiceShared, field: string): BlobService {
  if (!shared.blobs) throw new SluiceError("ValidationFailed", `${field}: this server stores no attachments.`);
  return shared.blobs;
}

/** A part of the jobs service: what it shares with the others, under the names its code uses. */
export abstract class JobServicePart {
  protected readonly store: JobServiceStore;
  protected readonly queues: QueueService;
  protected readonly clock: Clock;
  protected readonly ids: IdSource;
  protected readonly random: () => number;
  protected readonly jobQueues: JobQueues;
  protected readonly parked: ParkedLeases;

  constructor(protected readonly shared: JobServiceShared) {
    this.store = shared.store;
    this.queues = shared.queues;
    this.clock = shared.clock;
    this.ids = shared.ids;
    this.random = shared.random;
    this.jobQueues = shared.jobQueues;
    this.parked = shared.parked;
  }
}
