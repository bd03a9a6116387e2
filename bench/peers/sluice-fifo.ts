/**
 * The fifo-groups comparison (issue 3): Sluice on a `.fifo` queue with many message groups, beside
 * BullMQ's *standard* workload. Open-source BullMQ has no per-group FIFO (groups are a BullMQ Pro
 * feature), so its row is the durable-standard one relabelled: the ratio says what FIFO costs
 * Sluice against the peer to beat, not FIFO against FIFO.
 */
import type { Row, RowContext, RowResult } from "../row.js";
import { bullmqRow } from "./bullmq.js";
import { sluiceSqsRow } from "./sluice.js";

/** Enough groups that all 64 consumers × 10 messages can be leased at once (one batch per group in flight). */
export const fifoGroups = 640;

export const sluiceFifoRow: Row = sluiceSqsRow({
  label: `Sluice FIFO, ${fifoGroups} groups (SQLite WAL, fsync before ack)`,
  tag: "sluice-fifo",
  queueName: (base) => `${base}.fifo`,
  // Explicit dedup ids: content hashing would add a SHA-256 per message the standard row doesn't pay.
  attributes: { FifoQueue: "true", ContentBasedDeduplication: "false" },
  entryFields: (seq) => ({
    // Round-robin: consecutive messages (one batch) land in 10 different groups.
    MessageGroupId: `g${seq % fifoGroups}`,
    // Unique per message within the phase's queue, so the server's dedup window drops none.
    MessageDeduplicationId: `m${seq}`,
  }),
  notes: [`FIFO queue, ${fifoGroups} message groups round-robin, explicit MessageDeduplicationId per message`],
});

export const bullmqStandardForFifoRow: Row = {
  peer: "bullmq",
  label: "BullMQ + Redis (AOF always), standard — no per-group FIFO in open-source BullMQ",
  async run(ctx: RowContext): Promise<RowResult> {
    const result = await bullmqRow.run.call(this, ctx);
    result.notes.push("same workload as durable-standard-batch10: open-source BullMQ has no per-group FIFO");
    return result;
  },
};
