/** ChangeMessageVisibility and ChangeMessageVisibilityBatch. */
import type { VisibilityChange } from "../../../core/index.js";
import { defineAction, queueForUrl } from "../action.js";
import { type WireObject, requiredInteger, requiredString } from "../wire-input.js";
import { type BatchResultErrorEntry, decodeBatchEntries, failedEntriesXml, idEntriesXml, partitionResults, runBatch } from "./batch.js";

function decodeChange(o: WireObject): VisibilityChange {
  return { receiptHandle: requiredString(o, "ReceiptHandle"), visibilityTimeoutSeconds: requiredInteger(o, "VisibilityTimeout") };
}

export const changeMessageVisibility = defineAction({
  decode: (input) => ({ queueUrl: requiredString(input, "QueueUrl"), change: decodeChange(input) }),
  async run(req, ctx): Promise<void> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    const [outcome] = await ctx.queues.changeVisibility(queue, [req.change]);
    if (!outcome!.ok) throw outcome!.error;
  },
});

interface ChangeMessageVisibilityBatchResult {
  Successful: Array<{ Id: string }>;
  Failed: BatchResultErrorEntry[];
}

export const changeMessageVisibilityBatch = defineAction({
  decode: (input) => {
    const queueUrl = requiredString(input, "QueueUrl");
    return { queueUrl, entries: decodeBatchEntries(input, "ChangeMessageVisibilityBatchRequestEntry", decodeChange) };
  },
  async run(req, ctx): Promise<ChangeMessageVisibilityBatchResult> {
    const queue = await queueForUrl(ctx, req.queueUrl);
    const results = await runBatch(req.entries, (changes) => ctx.queues.changeVisibility(queue, changes));
    return partitionResults(results, (id) => ({ Id: id }), ctx.identity);
  },
  toXml: (res) => idEntriesXml("ChangeMessageVisibilityBatchResultEntry", res.Successful) + failedEntriesXml(res.Failed),
});
