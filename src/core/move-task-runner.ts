/**
 * Runs message move tasks in the background on the injected clock. Each step moves one batch in
 * one store write (which also counts it on the task, so progress is exact across crashes); a
 * rate-limited task moves its per-second allowance once per tick, an unlimited one moves batch
 * after batch. Tasks are rows in the store: start() picks up the ones a restart interrupted.
 */
import type { Clock, TimerHandle } from "./clock.js";
import { limits } from "./limits.js";
import type { MoveTaskRecord } from "./move-task-record.js";
import type { QueueObserver } from "./observer.js";
import type { Store } from "./store.js";

/**
 * Why a task failed (its failureReason), in core's words: each protocol words them its own way.
 * An unexpected error is recorded as `InternalError: <message>`.
 */
export const moveTaskFailures = {
  sourceGone: "SourceQueueGone",
  destinationGone: "DestinationQueueGone",
  /** A message's original source queue (it goes back there) is unknown or gone. */
  sourceUnresolved: "MessageSourceUnknown",
} as const;

interface Running {
  timer?: TimerHandle;
  step?: Promise<void>;
  /** run() was called during a step: step again right after it (it may have missed a cancel). */
  again?: boolean;
}

export interface MoveTaskRunnerDeps {
  store: Store;
  clock: Clock;
  /** Unexpected errors (the task is marked FAILED too); the server passes its logger. */
  onError?: (err: unknown) => void;
  /** Told of each task that ended here. */
  observer?: QueueObserver;
}

export class MoveTaskRunner {
  private readonly running = new Map<string, Running>();
  private stopped = false;

  constructor(private readonly deps: MoveTaskRunnerDeps) {}

  /** Resumes every active task (after a restart). Idempotent. */
  async start(): Promise<void> {
    this.stopped = false;
    const active = await this.deps.store.moveTaskList({ activeOnly: true, limit: Number.MAX_SAFE_INTEGER });
    for (const task of active) this.run(task.taskHandle);
  }

  /** Stops scheduling and waits for the batches in progress; tasks stay RUNNING in the store. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const r of this.running.values()) r.timer?.cancel();
    await Promise.all([...this.running.values()].map((r) => r.step));
    this.running.clear();
  }

  isTracking(taskHandle: string): boolean {
    return this.running.has(taskHandle);
  }

  /** Runs the task's next step now (a new task, or a cancel that should take effect at once). */
  run(taskHandle: string): void {
    if (this.stopped) return;
    const r = this.running.get(taskHandle) ?? {};
    this.running.set(taskHandle, r);
    r.timer?.cancel();
    r.timer = undefined;
    if (r.step) r.again = true;
    else r.step = this.stepSafely(taskHandle);
  }

  /** Resolves once no step is running or scheduled to run before the clock moves (tests). */
  async idle(): Promise<void> {
    for (;;) {
      const steps = [...this.running.values()].map((r) => r.step).filter((s) => s !== undefined);
      if (steps.length === 0) return;
      await Promise.all(steps);
    }
  }

  private async stepSafely(taskHandle: string): Promise<void> {
    try {
      const next = await this.step(taskHandle);
      const r = this.running.get(taskHandle);
      if (!r) return;
      if (next === "done" || this.stopped) {
        this.running.delete(taskHandle);
      } else if (r.again) {
        r.again = false;
        r.step = this.stepSafely(taskHandle);
        return;
      } else {
        r.timer = this.deps.clock.setTimer(limits.moveTaskTickMs, () => this.run(taskHandle));
      }
      r.step = undefined;
    } catch (err) {
      this.running.delete(taskHandle);
      if (this.stopped) return;
      this.deps.onError?.(err);
      const message = err instanceof Error ? err.message : String(err);
      await this.finish(taskHandle, "FAILED", `InternalError: ${message}`).catch(() => undefined);
    }
  }

  /** One step: "done" when the task reached a final status, "later" to run again after a tick. */
  private async step(taskHandle: string): Promise<"done" | "later"> {
    const { store, clock } = this.deps;
    for (;;) {
      if (this.stopped) return "later";
      const task = await store.moveTaskGet({ taskHandle });
      if (!task) return "done";
      if (task.status === "CANCELLING") {
        await this.finish(taskHandle, "CANCELLED");
        return "done";
      }
      if (task.status !== "RUNNING") return "done";
      const account = task.account ?? "";
      const source = await store.queueGet({ account, name: task.sourceQueueName });
      if (!source) return this.failed(task, moveTaskFailures.sourceGone);
      let destinationQueueId: number | undefined;
      if (task.destinationQueueName !== undefined) {
        const destination = await store.queueGet({ account, name: task.destinationQueueName });
        if (!destination) return this.failed(task, moveTaskFailures.destinationGone);
        destinationQueueId = destination.id;
      }
      const max = task.maxMessagesPerSecond !== undefined ? Math.max(1, Math.floor((task.maxMessagesPerSecond * limits.moveTaskTickMs) / 1000)) : limits.moveTaskBatchMax;
      const nowMs = clock.nowMs();
      const result = await store.messageMove({
        sourceQueueId: source.id,
        destinationQueueId,
        max,
        nowMs,
        minSentAtMs: nowMs - source.config.messageRetentionPeriodSeconds * 1000,
        taskHandle,
      });
      // Moved messages are visible at once: long polls on every node wake for them (Store.notifier).
      for (const [queueId, count] of Object.entries(result.movedByQueueId)) store.notifier.publish({ kind: "messagesVisible", queueId: Number(queueId), count, visibleAtMs: nowMs });
      if (result.taskNotRunning) continue; // cancelled meanwhile: the next pass finishes it
      // Deleted between the reads above and the move's write, which checked them.
      if (result.sourceGone) return this.failed(task, moveTaskFailures.sourceGone);
      if (result.sourceUnresolved) return this.failed(task, moveTaskFailures.sourceUnresolved);
      if (result.destinationGone) return this.failed(task, moveTaskFailures.destinationGone);
      if (result.moved < max) {
        // Only a RUNNING task completes; one cancelled meanwhile is finished by the next pass.
        if (await this.finish(taskHandle, "COMPLETED")) return "done";
        continue;
      }
      if (task.maxMessagesPerSecond !== undefined) return "later";
    }
  }

  private async failed(task: MoveTaskRecord, reason: string): Promise<"done"> {
    await this.finish(task.taskHandle, "FAILED", reason);
    return "done";
  }

  private async finish(taskHandle: string, status: "COMPLETED" | "CANCELLED" | "FAILED", failureReason?: string): Promise<boolean> {
    const fromStatuses = status === "COMPLETED" ? (["RUNNING"] as const) : status === "CANCELLED" ? (["CANCELLING"] as const) : (["RUNNING", "CANCELLING"] as const);
    const finished = await this.deps.store.moveTaskUpdate({ taskHandle, status, failureReason, fromStatuses, nowMs: this.deps.clock.nowMs() });
    const observe = this.deps.observer?.moveTaskFinished;
    if (finished && observe) {
      const task = await this.deps.store.moveTaskGet({ taskHandle });
      if (task) observe(task);
    }
    return finished;
  }
}
