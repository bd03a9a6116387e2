/**
 * The background events an operator wants in the log at info: message move tasks (DLQ redrives)
 * starting and ending, and webhook deliveries given up. Failed attempts that will be retried go
 * to debug. Named fields only; a webhook's URL is reduced to its host (its path may be a secret).
 */
import type { MoveTaskRecord, QueueObserver } from "../core/index.js";
import type { WebhookAttemptReport } from "../protocols/jobs/index.js";
import type { Logger } from "./logger.js";

function taskFields(task: MoveTaskRecord): Record<string, unknown> {
  return {
    taskHandle: task.taskHandle,
    source: task.sourceQueueName,
    destination: task.destinationQueueName ?? "(each message's source queue)",
    status: task.status,
    movedCount: task.movedCount,
    toMoveCount: task.toMoveCount,
    failureReason: task.failureReason,
  };
}

export function moveTaskLog(logger: Logger): Pick<QueueObserver, "moveTaskStarted" | "moveTaskFinished"> {
  return {
    moveTaskStarted: (task) => logger.info(taskFields(task), "move task started"),
    moveTaskFinished: (task) => logger.info({ ...taskFields(task), durationMs: task.updatedAtMs - task.startedAtMs }, "move task finished"),
  };
}

/** `accountId`: the server's own account's id (--account-id), which the store names "". */
export function webhookAttemptLog(logger: Logger, accountId: string): (report: WebhookAttemptReport) => void {
  return (r) => {
    if (r.outcome === "delivered") return;
    const fields = { deliveryId: r.deliveryId, jobId: r.jobId, queue: r.queue, account: r.account === "" ? accountId : r.account, event: r.event, host: r.host, attempts: r.attempts, statusCode: r.statusCode, error: r.error };
    if (r.outcome === "gaveUp") logger.info(fields, "webhook delivery given up");
    else logger.debug(fields, "webhook delivery failed; will retry");
  };
}
