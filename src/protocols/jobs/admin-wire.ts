/** The admin routes' JSON: peeked and sent messages, redrive tasks, and message attributes in and out. */
import { type MessageAttributes, type MoveTaskRecord, type PeekedMessage, type SendResult, fail, formatSequenceNumber } from "../../core/index.js";
import { isoTime } from "./iso-time.js";

export interface WireAttributeValue {
  dataType: string;
  stringValue?: string;
  binaryValue?: string;
}

/** Message attributes as sent in JSON (binary values base64) → core's; a binary value that isn't base64 is refused. */
export function messageAttributesOf(wire: Record<string, WireAttributeValue> | undefined): MessageAttributes | undefined {
  if (!wire) return undefined;
  const out: MessageAttributes = {};
  for (const [name, v] of Object.entries(wire)) {
    if (v.binaryValue === undefined) {
      out[name] = { dataType: v.dataType, stringValue: v.stringValue };
      continue;
    }
    if (v.stringValue !== undefined) fail("ValidationFailed", `body.messageAttributes.${name} has both stringValue and binaryValue: send one.`);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v.binaryValue) || v.binaryValue.length % 4 !== 0) fail("ValidationFailed", `body.messageAttributes.${name}.binaryValue is not base64.`);
    out[name] = { dataType: v.dataType, binaryValue: Buffer.from(v.binaryValue, "base64") };
  }
  return out;
}

function messageAttributesWire(attributes: MessageAttributes): Record<string, WireAttributeValue> {
  const out: Record<string, WireAttributeValue> = {};
  for (const [name, v] of Object.entries(attributes)) {
    out[name] = v.binaryValue ? { dataType: v.dataType, binaryValue: Buffer.from(v.binaryValue).toString("base64") } : { dataType: v.dataType, stringValue: v.stringValue ?? "" };
  }
  return out;
}

/** System attributes under SQS's names, as ReceiveMessage's `Attributes` (strings), so SQS users read them at a glance. */
function systemAttributesWire(m: PeekedMessage, fifo: boolean, arnOf: (queueName: string) => string): Record<string, string> {
  const out: Record<string, string> = {
    SenderId: m.senderId,
    SentTimestamp: String(m.sentAtMs),
    ApproximateReceiveCount: String(m.receiveCount),
  };
  if (m.firstReceivedAtMs !== undefined) out.ApproximateFirstReceiveTimestamp = String(m.firstReceivedAtMs);
  if (m.groupId !== undefined) out.MessageGroupId = m.groupId;
  if (fifo && m.deduplicationId !== undefined) out.MessageDeduplicationId = m.deduplicationId;
  if (fifo) out.SequenceNumber = formatSequenceNumber(m.seq);
  if (m.deadLetterSourceQueueName !== undefined) out.DeadLetterQueueSourceArn = arnOf(m.deadLetterSourceQueueName);
  const trace = m.systemAttributes.AWSTraceHeader?.stringValue;
  if (trace !== undefined) out.AWSTraceHeader = trace;
  return out;
}

export function peekedMessageWire(m: PeekedMessage, fifo: boolean, arnOf: (queueName: string) => string): Record<string, unknown> {
  return {
    messageId: m.messageId,
    body: m.body,
    attributes: systemAttributesWire(m, fifo, arnOf),
    messageAttributes: messageAttributesWire(m.attributes),
    sentAt: isoTime(m.sentAtMs),
    visibleAt: isoTime(m.visibleAtMs),
    receiveCount: m.receiveCount,
    priority: m.priority,
    state: m.state,
  };
}

export function sentMessageWire(r: SendResult): Record<string, unknown> {
  return { messageId: r.messageId, md5OfBody: r.bodyMd5, md5OfMessageAttributes: r.attributesMd5 ?? null, sequenceNumber: r.sequenceNumber ?? null };
}

export function redriveTaskWire(t: MoveTaskRecord): Record<string, unknown> {
  return {
    taskHandle: t.taskHandle,
    source: t.sourceQueueName,
    destination: t.destinationQueueName ?? null,
    status: t.status,
    movedCount: t.movedCount,
    toMoveCount: t.toMoveCount,
    maxPerSecond: t.maxMessagesPerSecond ?? null,
    failureReason: t.failureReason ?? null,
    startedAt: isoTime(t.startedAtMs),
    updatedAt: isoTime(t.updatedAtMs),
  };
}
