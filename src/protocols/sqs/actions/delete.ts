/** DeleteMessage and DeleteMessageBatch. */
import { defineAction, queueForUrl } from "../action.js";
import { requiredString } from "../wire-input.js";
import { type BatchResultErrorEntry, decodeBatchEntries, failedEntriesXml, idEntriesXml, partitionResults, runBatch } from "./batch.js";

export const deleteMessage = defineAction({
  decode: (input) => ({ queueUrl: requiredString(input, "QueueUrl"), receiptHandle: requiredString(input, "ReceiptHandle") }),
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    const [outcome] = await ctx.queues.deleteMessages(queue, [req.receiptHandle]);
    if (!outcome!.ok) throw outcome!.error;
  },
});

interface DeleteMessageBatchResult {
  Successful: Array<{ Id: string }>;
  Failed: BatchResultErrorEntry[];
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
  toXml: (res) => idEntriesXml("DeleteMessageBatchResultEntry", res.Successful) + failedEntriesXml(res.Failed),
});
