/**
 * The queue message that carries a job: its body is the job's input JSON (so the SQS API, the
 * dashboard and a dead-letter queue show what the job was asked to do), its MessageId the job id.
 */
import { md5Hex } from "../digests.js";
import { fail } from "../errors.js";
import type { NewMessage } from "../message.js";
import { checkCharacters } from "../message-validation.js";
import type { QueueRecord } from "../queue.js";
import { limits } from "../limits.js";

/**
 * What can be said of a job's input before its queue is known: no queue takes more than the SQS
 * limit, and no queue takes characters SQS refuses. Checked before the queue is created on first
 * use, so a refused submit creates nothing.
 */
export function checkJobInput(inputJson: string): void {
  const sizeBytes = Buffer.byteLength(inputJson, "utf8");
  if (sizeBytes > limits.messageSizeMaxBytes) fail("MessageTooLong", `The job's input is ${sizeBytes} bytes of JSON; at most ${limits.messageSizeMaxBytes} are accepted.`);
  checkCharacters(inputJson, "job's input");
}

/**
 * The message for a job on `queue`. `inputJson` has passed checkJobInput (its characters are not
 * scanned again here); what is left to check is the queue's own, possibly smaller, size limit.
 */
export function jobMessage(p: { queue: QueueRecord; jobId: string; inputJson: string; priority: number; availableAtMs: number; senderId: string }): NewMessage {
  const sizeBytes = Buffer.byteLength(p.inputJson, "utf8");
  if (sizeBytes > p.queue.config.maximumMessageSizeBytes) {
    fail("MessageTooLong", `The job's input is ${sizeBytes} bytes of JSON; queue ${p.queue.name} accepts at most ${p.queue.config.maximumMessageSizeBytes}.`);
  }
  return {
    messageId: p.jobId,
    body: p.inputJson,
    attributes: {},
    systemAttributes: {},
    bodyMd5: md5Hex(p.inputJson),
    // Retention counts from when the job is due, so one submitted for next month is not expired
    // on arrival; the queue's age-of-oldest likewise measures how long a due job has waited.
    sentAtMs: p.availableAtMs,
    visibleAtMs: p.availableAtMs,
    priority: p.priority,
    senderId: p.senderId,
  };
}
