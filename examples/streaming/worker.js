/**
 * The streaming worker: tells a story from `{"prompt": "…"}`, one token at a time, each sent to
 * the job's readers with ctx.emit() as it is made (the SDK batches them on the wire). The job's
 * output is the whole story.
 *   node dist/cli/main.js worker examples/streaming/worker.js --queue stories
 * STORY_TOKEN_MS (default 40) paces the tokens, as a real model's speed would.
 */
import { NonRetryableError } from "@sluice/client";
import { generate } from "./markov.js";

const tokenMs = Number(process.env.STORY_TOKEN_MS ?? 40);

export default async function story(job, ctx) {
  const prompt = job.input?.prompt;
  if (typeof prompt !== "string" || prompt.trim() === "") throw new NonRetryableError('input must be {"prompt": "<some words>"}');
  let text = "";
  for (const token of generate(prompt)) {
    if (ctx.signal.aborted) break; // canceled: stop generating
    ctx.emit(token);
    text += token;
    await new Promise((resolve) => setTimeout(resolve, tokenMs));
  }
  return { prompt, text };
}
