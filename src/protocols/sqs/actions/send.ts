/** SendMessage and SendMessageBatch. */
import { fail, checkFifoBatch, limits, messageSizeBytes, type QueueRecord, type SendInput, type SendResult } from "../../../core/index.js";
import { type InputFacts, defineAction, queueForUrl } from "../action.js";
import { checkSystemAttributes, decodeMessageAttributes, priorityFromAttributes } from "../message-attributes.js";
import { type WireObject, optionalInteger, optionalObject, optionalString, requiredString } from "../wire-input.js";
import { jsonString } from "../json-text.js";
import { xmlElement } from "../xml.js";
import { type BatchResultErrorEntry, batchResultJsonText, decodeBatchEntries, failedEntriesXml, partitionResults, runBatch } from "./batch.js";

function decodeSendInput(o: WireObject, facts: InputFacts): SendInput {
  const attributes = decodeMessageAttributes(optionalObject(o, "MessageAttributes"), "MessageAttribute");
  const systemAttributes = decodeMessageAttributes(optionalObject(o, "MessageSystemAttributes"), "MessageSystemAttribute");
  checkSystemAttributes(systemAttributes);
  const input: SendInput = { body: requiredString(o, "MessageBody") };
  if (facts.plainStrings) input.bodyPlain = true;
  if (attributes) input.attributes = attributes;
  if (systemAttributes) input.systemAttributes = systemAttributes;
  const delaySeconds = optionalInteger(o, "DelaySeconds");
  if (delaySeconds !== undefined) input.delaySeconds = delaySeconds;
  const priority = priorityFromAttributes(attributes);
  if (priority !== undefined) input.priority = priority;
  const groupId = optionalString(o, "MessageGroupId");
  if (groupId !== undefined) input.groupId = groupId;
  const deduplicationId = optionalString(o, "MessageDeduplicationId");
  if (deduplicationId !== undefined) input.deduplicationId = deduplicationId;
  return input;
}

export interface SendMessageResult {
  MD5OfMessageBody: string;
  MD5OfMessageAttributes?: string;
  MD5OfMessageSystemAttributes?: string;
  MessageId: string;
  SequenceNumber?: string;
}

function sendResult(queue: QueueRecord, r: SendResult): SendMessageResult {
  return {
    MD5OfMessageBody: r.bodyMd5,
    MD5OfMessageAttributes: r.attributesMd5,
    MD5OfMessageSystemAttributes: r.systemAttributesMd5,
    MessageId: r.messageId,
    // Sequence numbers exist only on FIFO queues.
    SequenceNumber: queue.config.fifoQueue ? r.sequenceNumber : undefined,
  };
}

/** The members of JSON.stringify(r) between its braces, the same bytes (absent ones left out as it does). */
function sendResultJsonMembers(r: SendMessageResult): string {
  let text = `"MD5OfMessageBody":${jsonString(r.MD5OfMessageBody)}`;
  if (r.MD5OfMessageAttributes !== undefined) text += `,"MD5OfMessageAttributes":${jsonString(r.MD5OfMessageAttributes)}`;
  if (r.MD5OfMessageSystemAttributes !== undefined) text += `,"MD5OfMessageSystemAttributes":${jsonString(r.MD5OfMessageSystemAttributes)}`;
  text += `,"MessageId":${jsonString(r.MessageId)}`;
  if (r.SequenceNumber !== undefined) text += `,"SequenceNumber":${jsonString(r.SequenceNumber)}`;
  return text;
}

/** JSON.stringify of a SendMessage result, the same bytes. */
export function sendJsonText(res: SendMessageResult): string {
  return `{${sendResultJsonMembers(res)}}`;
}

/** JSON.stringify of a SendMessageBatch result, the same bytes. */
export function sendBatchJsonText(res: SendMessageBatchResult): string {
  return batchResultJsonText(res, (e) => `"Id":${jsonString(e.Id)},${sendResultJsonMembers(e)}`);
}

function sendResultXml(r: SendMessageResult): string {
  return (
    xmlElement("MD5OfMessageBody", r.MD5OfMessageBody) +
    xmlElement("MD5OfMessageAttributes", r.MD5OfMessageAttributes) +
    xmlElement("MD5OfMessageSystemAttributes", r.MD5OfMessageSystemAttributes) +
    xmlElement("MessageId", r.MessageId) +
    xmlElement("SequenceNumber", r.SequenceNumber)
  );
}

export const sendMessage = defineAction({
  decode: (input, facts) => ({ queueUrl: requiredString(input, "QueueUrl"), message: decodeSendInput(input, facts) }),
  async run(req, ctx): Promise<SendMessageResult> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    return sendResult(queue, await ctx.queues.sendMessage(queue, req.message));
  },
  toJsonText: sendJsonText,
  toXml: sendResultXml,
});

export interface SendMessageBatchResultEntry extends SendMessageResult {
  Id: string;
}

export interface SendMessageBatchResult {
  Successful: SendMessageBatchResultEntry[];
  Failed: BatchResultErrorEntry[];
}

export const sendMessageBatch = defineAction({
  decode: (input, facts) => {
    const queueUrl = requiredString(input, "QueueUrl");
    const entries = decodeBatchEntries(input, "SendMessageBatchRequestEntry", (entry) => decodeSendInput(entry, facts));
    let totalBytes = 0;
    for (const e of entries) if (e.ok) totalBytes += messageSizeBytes(e.value.body, e.value.attributes ?? {});
    if (totalBytes > limits.batchSizeMaxBytes) {
      fail("BatchRequestTooLong", `Batch requests cannot be longer than ${limits.batchSizeMaxBytes} bytes. You have sent ${totalBytes} bytes.`);
    }
    return { queueUrl, entries };
  },
  async run(req, ctx): Promise<SendMessageBatchResult> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    // A FIFO entry without a group (or a needed deduplication id) fails the whole call, as SQS.
    checkFifoBatch(queue.config, req.entries.flatMap((e) => (e.ok ? [e.value] : [])));
    const results = await runBatch(req.entries, (inputs) => ctx.queues.sendMessages(queue, inputs));
    return partitionResults(results, (id, r) => ({ Id: id, ...sendResult(queue, r) }), ctx.identity);
  },
  toJsonText: sendBatchJsonText,
  toXml: (res) => {
    let out = "";
    for (const e of res.Successful) {
      out += `<SendMessageBatchResultEntry>${xmlElement("Id", e.Id)}${xmlElement("MessageId", e.MessageId)}${xmlElement("MD5OfMessageBody", e.MD5OfMessageBody)}${xmlElement("MD5OfMessageAttributes", e.MD5OfMessageAttributes)}${xmlElement("MD5OfMessageSystemAttributes", e.MD5OfMessageSystemAttributes)}${xmlElement("SequenceNumber", e.SequenceNumber)}</SendMessageBatchResultEntry>`;
    }
    return out + failedEntriesXml(res.Failed);
  },
});
