/** DeleteMessage and DeleteMessageBatch. */
import { defineAction, queueForUrl } from "../action.js";
import { jsonString } from "../json-text.js";
import { requiredString } from "../wire-input.js";
import { type BatchResultErrorEntry, batchResultJsonText, decodeBatchEntries, failedEntriesXml, idEntriesXml, partitionResults, runBatch } from "./batch.js";

export const deleteMessage = defineAction({
  decode: (input) => ({ queueUrl: requiredString(input, "QueueUrl"), receiptHandle: requiredString(input, "ReceiptHandle") }),
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    const [outcome] = await ctx.queues.deleteMessages(queue, [req.receiptHandle]);
    if (!outcome!.ok) throw outcome!.error;
  },
});

export interface DeleteMessageBatchResult {
  Successful: Array<{ Id: string }>;
  Failed: BatchResultErrorEntry[];
}

/** JSON.stringify of a DeleteMessageBatch result, the same bytes. */
export function deleteBatchJsonText(res: DeleteMessageBatchResult): string {
  return batchResultJsonText(res, (e) => `"Id":${jsonString(e.Id)}`);
}

export const deleteMessageBatch = defineAction({
  decode: (input) => {
    const queueUrl = requiredString(input, "QueueUrl");
    const entries = decodeBatchEntries(input, "DeleteMessageBatchRequestEntry", (entry) => requiredString(entry, "ReceiptHandle"));
    return { queueUrl, entries };
  },
  async run(req, ctx): Promise<DeleteMessageBatchResult> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    const results = await runBatch(req.entries, (handles) => ctx.queues.deleteMessages(queue, handles));
    return partitionResults(results, (id) => ({ Id: id }), ctx.identity);
  },
  toJsonText: deleteBatchJsonText,
  toXml: (res) => idEntriesXml("DeleteMessageBatchResultEntry", res.Successful) + failedEntriesXml(res.Failed),
});
