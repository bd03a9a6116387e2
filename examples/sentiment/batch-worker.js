/**
 * Sentiment + entities, in batches of up to 32 jobs gathered within 20 ms:
 *   npx sluice worker examples/sentiment/batch-worker.js --queue sentiment
 * The handler takes an array of jobs and returns one result per job, in order; a BatchItemError
 * in a job's place fails that job alone while the rest of the batch succeeds.
 */
import { BatchItemError, defineWorker } from "@sluice/client";
import { analyze, textOf } from "./analyze.js";

export default defineWorker({
  batch: { size: 32, windowMs: 20 },
  handler: async (jobs) =>
    jobs.map((job) => {
      const text = textOf(job.input);
      return text === undefined ? new BatchItemError('input must be {"text": "<non-empty string>"}', { retryable: false }) : analyze(text);
    }),
});
