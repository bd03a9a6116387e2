/** ReceiveMessage: long polls, system attributes, and message attributes filtered by name. */
import { formatSequenceNumber, type MessageAttributes, type QueueRecord, type ReceivedMessage, type ReceiveInput } from "../../../core/index.js";
import { defineAction, queueForUrl } from "../action.js";
import { jsonString, plainJsonString } from "../json-text.js";
import { type AttributeNameFilter, type WireAttributeValue, attributeNameFilter, encodeAttributesJson, encodeAttributesXml, selectAttributes } from "../message-attributes.js";
import { type SqsIdentity, queueArn } from "../queue-url.js";
import { optionalInteger, optionalString, optionalStringList, requiredString } from "../wire-input.js";
import { escapeXml, xmlElement, xmlStringMap } from "../xml.js";

interface ReceiveRequest {
  queueUrl: string;
  /** The system attributes asked for, in SQS's order: found once per request, not per message. */
  systemAttributeNames: readonly string[];
  attributeFilter: AttributeNameFilter;
  maxMessages?: number;
  visibilityTimeoutSeconds?: number;
  waitTimeSeconds?: number;
  receiveRequestAttemptId?: string;
}

/** A received message, attributes still in core form (each protocol encodes binary its own way). */
export interface OutgoingMessage {
  messageId: string;
  receiptHandle: string;
  bodyMd5: string;
  body: string;
  /** The body needs no JSON escaping, known without scanning it (NewMessage.bodyPlain). */
  bodyPlain?: boolean;
  systemAttributes?: Record<string, string>;
  attributes?: MessageAttributes;
  attributesMd5?: string;
}

type SystemAttributeReader = (m: ReceivedMessage, queue: QueueRecord, identity: SqsIdentity) => string | undefined;

/** SQS's system attributes, in the order SQS lists them. Timestamps are epoch milliseconds. */
const systemAttributeReaders: Record<string, SystemAttributeReader> = {
  SenderId: (m) => m.senderId,
  SentTimestamp: (m) => String(m.sentAtMs),
  ApproximateReceiveCount: (m) => String(m.receiveCount),
  ApproximateFirstReceiveTimestamp: (m) => (m.firstReceivedAtMs === undefined ? undefined : String(m.firstReceivedAtMs)),
  SequenceNumber: (m, queue) => (queue.config.fifoQueue ? formatSequenceNumber(m.seq) : undefined),
  MessageDeduplicationId: (m) => m.deduplicationId,
  MessageGroupId: (m) => m.groupId,
  AWSTraceHeader: (m) => m.systemAttributes.AWSTraceHeader?.stringValue,
  DeadLetterQueueSourceArn: (m, _queue, identity) => (m.deadLetterSourceQueueName === undefined ? undefined : queueArn(identity, m.deadLetterSourceQueueName)),
};
const allSystemAttributeNames = Object.keys(systemAttributeReaders);

/** The names asked for (`All` or each one), in the order SQS lists them. */
function systemAttributesWanted(names: Set<string>): readonly string[] {
  return names.has("All") ? allSystemAttributeNames : allSystemAttributeNames.filter((n) => names.has(n));
}

function systemAttributesOf(m: ReceivedMessage, queue: QueueRecord, identity: SqsIdentity, wanted: readonly string[]): Record<string, string> | undefined {
  if (wanted.length === 0) return undefined;
  let out: Record<string, string> | undefined;
  for (const name of wanted) {
    const value = systemAttributeReaders[name]!(m, queue, identity);
    if (value !== undefined) (out ??= {})[name] = value;
  }
  return out;
}

function outgoing(m: ReceivedMessage, queue: QueueRecord, identity: SqsIdentity, req: ReceiveRequest): OutgoingMessage {
  const out: OutgoingMessage = { messageId: m.messageId, receiptHandle: m.receiptHandle, bodyMd5: m.bodyMd5, body: m.body, bodyPlain: m.bodyPlain };
  out.systemAttributes = systemAttributesOf(m, queue, identity, req.systemAttributeNames);
  const selected = selectAttributes(m.attributes, m.attributesMd5, req.attributeFilter);
  if (selected) {
    out.attributes = selected.attributes;
    out.attributesMd5 = selected.md5;
  }
  return out;
}

interface JsonMessage {
  MessageId: string;
  ReceiptHandle: string;
  MD5OfBody: string;
  Body: string;
  Attributes?: Record<string, string>;
  MD5OfMessageAttributes?: string;
  MessageAttributes?: Record<string, WireAttributeValue>;
}

function messageJson(m: OutgoingMessage): JsonMessage {
  return {
    MessageId: m.messageId,
    ReceiptHandle: m.receiptHandle,
    MD5OfBody: m.bodyMd5,
    Body: m.body,
    Attributes: m.systemAttributes,
    MD5OfMessageAttributes: m.attributesMd5,
    MessageAttributes: m.attributes && encodeAttributesJson(m.attributes),
  };
}

/** JSON.stringify(map), the same bytes (for-in walks keys in the order it does). */
function stringMapJsonText(map: Record<string, string>): string {
  let text = "";
  for (const name in map) text += `${text === "" ? "{" : ","}${jsonString(name)}:${jsonString(map[name]!)}`;
  return text === "" ? "{}" : `${text}}`;
}

/** messageJson's JSON text, the same bytes, for a message whose body needs no escaping (plainJsonString). */
function plainMessageJsonText(m: OutgoingMessage): string {
  let text = `{"MessageId":${jsonString(m.messageId)},"ReceiptHandle":${jsonString(m.receiptHandle)},"MD5OfBody":${jsonString(m.bodyMd5)},"Body":"${m.body}"`;
  if (m.systemAttributes !== undefined) text += `,"Attributes":${stringMapJsonText(m.systemAttributes)}`;
  if (m.attributesMd5 !== undefined) text += `,"MD5OfMessageAttributes":${jsonString(m.attributesMd5)}`;
  if (m.attributes !== undefined) text += `,"MessageAttributes":${JSON.stringify(encodeAttributesJson(m.attributes))}`;
  return `${text}}`;
}

/** The JSON response's value. SQS omits Messages entirely when none were received. */
export function receiveJson(messages: readonly OutgoingMessage[]): { Messages?: JsonMessage[] } {
  return messages.length > 0 ? { Messages: messages.map(messageJson) } : {};
}

/**
 * JSON.stringify(receiveJson(messages)), the same bytes. Bodies are a receive's bulk: when none
 * needs escaping they are copied in, not walked character by character; else (JSON bodies, with
 * their quotes, are found at the first one) the response is stringified whole, as before.
 */
export function receiveJsonText(messages: readonly OutgoingMessage[]): string {
  if (messages.length === 0) return "{}";
  for (const m of messages) if (m.bodyPlain !== true && !plainJsonString(m.body)) return JSON.stringify(receiveJson(messages));
  // Joined once into flat text: a template around the join would be flattened again for its length.
  const parts = messages.map(plainMessageJsonText);
  parts[0] = `{"Messages":[${parts[0]!}`;
  parts[parts.length - 1] += "]}";
  return parts.join(",");
}

function messageXml(m: OutgoingMessage): string {
  return (
    `<Message><MessageId>${escapeXml(m.messageId)}</MessageId><ReceiptHandle>${escapeXml(m.receiptHandle)}</ReceiptHandle>` +
    `<MD5OfBody>${m.bodyMd5}</MD5OfBody><Body>${escapeXml(m.body)}</Body>` +
    xmlStringMap("Attribute", "Name", "Value", m.systemAttributes) +
    xmlElement("MD5OfMessageAttributes", m.attributesMd5) +
    (m.attributes ? encodeAttributesXml(m.attributes) : "") +
    `</Message>`
  );
}

export const receiveMessage = defineAction({
  decode: (input): ReceiveRequest => {
    const queueUrl = requiredString(input, "QueueUrl");
    // AttributeNames is deprecated in favour of MessageSystemAttributeNames; SQS honours both.
    const systemAttributeNames = systemAttributesWanted(new Set([...(optionalStringList(input, "AttributeNames") ?? []), ...(optionalStringList(input, "MessageSystemAttributeNames") ?? [])]));
    return {
      queueUrl,
      systemAttributeNames,
      attributeFilter: attributeNameFilter(optionalStringList(input, "MessageAttributeNames")),
      maxMessages: optionalInteger(input, "MaxNumberOfMessages"),
      visibilityTimeoutSeconds: optionalInteger(input, "VisibilityTimeout"),
      waitTimeSeconds: optionalInteger(input, "WaitTimeSeconds"),
      receiveRequestAttemptId: optionalString(input, "ReceiveRequestAttemptId"),
    };
  },
  async run(req, ctx): Promise<OutgoingMessage[]> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    const input: ReceiveInput = {
      maxMessages: req.maxMessages,
      visibilityTimeoutSeconds: req.visibilityTimeoutSeconds,
      waitTimeSeconds: req.waitTimeSeconds,
      receiveRequestAttemptId: req.receiveRequestAttemptId,
    };
    // Only a receive that waits needs to hear about the client leaving (created when it does).
    if ((req.waitTimeSeconds ?? queue.config.receiveMessageWaitTimeSeconds) > 0) input.signal = ctx.signal;
    const messages = await ctx.queues.receiveMessages(queue, input);
    return messages.map((m) => outgoing(m, queue, ctx.identity, req));
  },
  toJson: receiveJson,
  toJsonText: receiveJsonText,
  toXml: (messages) => messages.map(messageXml).join(""),
});
