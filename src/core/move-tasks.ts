/**
 * Message move tasks (DLQ redrive): StartMessageMoveTask, CancelMessageMoveTask and
 * ListMessageMoveTasks, protocol-neutral. Tasks are store rows run by MoveTaskRunner; queues are
 * named by name here, and errors carry a subject (errors.ts) for protocols that word them their way.
 */
import type { Clock } from "./clock.js";
import { fail } from "./errors.js";
import type { IdSource } from "./ids.js";
import { limits } from "./limits.js";
import type { MoveTaskRecord } from "./move-task-record.js";
import { MoveTaskRunner } from "./move-task-runner.js";
import type { QueueObserver } from "./observer.js";
import { type QueueDirectory, isDeadLetterQueue } from "./redrive.js";
import type { Store } from "./store.js";

export interface StartMoveTaskInput {
  sourceQueueName: string;
  /** Absent: each message goes back to the queue it was dead-lettered from. */
  destinationQueueName?: string;
  /** 1–500; absent: as fast as the store allows, in batches. */
  maxMessagesPerSecond?: number;
}

export interface MoveTasksDeps {
  store: Store;
  clock: Clock;
  ids: IdSource;
  /** An account's queues, by name (a source must be some queue's dead-letter queue). */
  directoryOf: (account: string) => QueueDirectory;
  onError?: (err: unknown) => void;
  observer?: QueueObserver;
}

/** Task handles are message ids (UUIDs). */
const taskHandlePattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function queueNotFound(role: "source" | "destination", name: string): never {
  fail("ResourceNotFound", `The ${role} queue ${name} does not exist.`, { kind: role === "source" ? "moveTaskSource" : "moveTaskDestination" });
}

export class MoveTasks {
  /** The server starts it (resuming tasks a restart interrupted) and stops it on shutdown. */
  readonly runner: MoveTaskRunner;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly directoryOf: (account: string) => QueueDirectory;
  private readonly observer: QueueObserver;

  constructor(deps: MoveTasksDeps) {
    this.store = deps.store;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.directoryOf = deps.directoryOf;
    this.observer = deps.observer ?? {};
    this.runner = new MoveTaskRunner({ store: deps.store, clock: deps.clock, onError: deps.onError, observer: this.observer });
  }

  /** `account`: whose queues the task moves between ("" is the server's own: QueueRecord.account). */
  async start(account: string, input: StartMoveTaskInput): Promise<MoveTaskRecord> {
    const source = await this.store.queueGet({ account, name: input.sourceQueueName });
    if (!source) queueNotFound("source", input.sourceQueueName);
    if (!(await isDeadLetterQueue(this.directoryOf(account), source.name))) {
      fail("InvalidParameterValue", "Source queue must be configured as a Dead Letter Queue.");
    }
    if (input.destinationQueueName !== undefined) {
      const destination = await this.store.queueGet({ account, name: input.destinationQueueName });
      if (!destination) queueNotFound("destination", input.destinationQueueName);
      if (destination.id === source.id) fail("InvalidParameterValue", "The destination can't be the source queue.", { kind: "moveTaskDestinationInvalid", reason: "isSource" });
      if (destination.config.fifoQueue !== source.config.fifoQueue) {
        fail("InvalidParameterValue", "The source and destination queues must be of the same type (both FIFO or both standard).", { kind: "moveTaskDestinationInvalid", reason: "otherType" });
      }
    }
    const rate = input.maxMessagesPerSecond;
    if (rate !== undefined && (!Number.isInteger(rate) || rate < limits.moveTaskRateMin || rate > limits.moveTaskRateMax)) {
      fail("InvalidParameterValue", `The rate must be an integer from ${limits.moveTaskRateMin} to ${limits.moveTaskRateMax} messages per second, got ${rate}.`, { kind: "moveTaskRate", value: rate });
    }
    const nowMs = this.clock.nowMs();
    const stats = await this.store.queueStats({ queueId: source.id, nowMs, minSentAtMs: nowMs - source.config.messageRetentionPeriodSeconds * 1000 });
    const task: MoveTaskRecord = {
      taskHandle: this.ids.messageId(),
      ...(account === "" ? {} : { account }),
      sourceQueueName: source.name,
      destinationQueueName: input.destinationQueueName,
      maxMessagesPerSecond: rate,
      status: "RUNNING",
      movedCount: 0,
      toMoveCount: stats.visible,
      startedAtMs: nowMs,
      updatedAtMs: nowMs,
    };
    const { created } = await this.store.moveTaskCreate({ task });
    // On the SQS wire an InvalidParameterValue in SQS's words (sqs-errors.ts, sqs-wording.ts), as SQS answers.
    if (!created) fail("RedriveInProgress", `A move task is already running on ${source.name}: one at a time per source queue.`);
    this.observer.moveTaskStarted?.(task);
    this.runner.run(task.taskHandle);
    return task;
  }

  /** Asks a RUNNING task to stop; returns it (CANCELLING, or CANCELLED if no runner holds it). */
  async cancel(account: string, taskHandle: string): Promise<MoveTaskRecord> {
    const nowMs = this.clock.nowMs();
    // As SQS: a handle that can't be one is a bad value; one that names no task, not found.
    if (!taskHandlePattern.test(taskHandle)) fail("InvalidParameterValue", "Not a move task handle.", { kind: "moveTaskHandle" });
    const task = await this.store.moveTaskGet({ taskHandle });
    // Another account's task is one this caller can't see.
    if (!task || (task.account ?? "") !== account) fail("ResourceNotFound", "Task does not exist.");
    if (task.status !== "RUNNING") fail("UnsupportedOperation", `Only a RUNNING task can be cancelled; this one is ${task.status}.`);
    await this.store.moveTaskUpdate({ taskHandle, status: "CANCELLING", fromStatuses: ["RUNNING"], nowMs });
    if (this.runner.isTracking(taskHandle)) {
      this.runner.run(taskHandle);
    } else {
      // Nothing is moving it in this process (runner not started): finish the cancel here.
      const cancelled = await this.store.moveTaskUpdate({ taskHandle, status: "CANCELLED", fromStatuses: ["CANCELLING"], nowMs });
      const ended = await this.store.moveTaskGet({ taskHandle });
      if (cancelled && ended) this.observer.moveTaskFinished?.(ended);
      return ended!;
    }
    return (await this.store.moveTaskGet({ taskHandle }))!;
  }

  /** The source queue's tasks, newest first; `maxResults` 1–10, default 1 (the latest). */
  async list(account: string, sourceQueueName: string, maxResults = 1): Promise<MoveTaskRecord[]> {
    if (!Number.isInteger(maxResults) || maxResults < 1 || maxResults > limits.listMoveTasksMaxResults) {
      fail("InvalidParameterValue", `At most ${limits.listMoveTasksMaxResults} tasks can be listed at once (at least 1), got ${maxResults}.`, { kind: "moveTaskListLimit", value: maxResults });
    }
    const source = await this.store.queueGet({ account, name: sourceQueueName });
    if (!source) queueNotFound("source", sourceQueueName);
    return this.store.moveTaskList({ account, sourceQueueName, limit: maxResults });
  }
}

/** One account's move tasks (QueueService.forAccount). Holds nothing of its own but which account. */
export class AccountMoveTasks {
  constructor(
    readonly tasks: MoveTasks,
    readonly account: string,
  ) {}

  start(input: StartMoveTaskInput): Promise<MoveTaskRecord> {
    return this.tasks.start(this.account, input);
  }

  cancel(taskHandle: string): Promise<MoveTaskRecord> {
    return this.tasks.cancel(this.account, taskHandle);
  }

  list(sourceQueueName: string, maxResults?: number): Promise<MoveTaskRecord[]> {
    return this.tasks.list(this.account, sourceQueueName, maxResults);
  }
}
