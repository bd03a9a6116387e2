/**
 * Sentiment + entities, one job at a time:
 *   npx sluice worker examples/sentiment/worker.js --queue sentiment
 * Input `{ "text": "..." }` → output `{ score, label, entities: [{ text, type }] }`.
 */
import { NonRetryableError } from "@sluice/client";
import { analyze, textOf } from "./analyze.js";

export default async function sentiment(job, ctx) {
  const text = textOf(job.input);
  // Bad input fails the same way every time: don't retry it, send it to the dead-letter queue.
  if (text === undefined) throw new NonRetryableError('input must be {"text": "<non-empty string>"}');
  if (ctx.signal.aborted) return null;
  return analyze(text);
}
