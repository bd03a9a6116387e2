/**
 * The transcribe → summarise → notify pipeline on Sluice's job dependencies: three queues, a
 * worker on each, and three jobs submitted up front — summarise depends on transcribe, notify on
 * summarise — so each stage starts when the one before has succeeded, and works on its output
 * (`job.parents`). Usage: node examples/pipeline/pipeline.js [server-url] [recording.txt]
 *
 * Transcription is a stand-in: a recording's transcript is read from the .txt beside it (no speech
 * model ships with this repository). Summarising is real NLP: wink-nlp ranks the transcript's
 * sentences by how many of its frequent words each holds, and keeps the best two.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Sluice } from "@sluice/client";
import winkNLP from "wink-nlp";
import model from "wink-eng-lite-web-model";

const nlp = winkNLP(model);
const its = nlp.its;

/** The two sentences holding most of the text's frequent content words, in their original order. */
export function summarise(text) {
  const doc = nlp.readDoc(text);
  const counts = new Map();
  doc.tokens().filter((t) => t.out(its.type) === "word" && !t.out(its.stopWordFlag)).each((t) => {
    const w = t.out(its.normal);
    counts.set(w, (counts.get(w) ?? 0) + 1);
  });
  const scored = doc.sentences().out().map((sentence, index) => {
    const words = nlp.readDoc(sentence).tokens().out(its.normal);
    return { index, sentence, score: words.reduce((sum, w) => sum + (counts.get(w) ?? 0), 0) / Math.max(1, words.length) };
  });
  return scored.sort((a, b) => b.score - a.score).slice(0, 2).sort((a, b) => a.index - b.index).map((s) => s.sentence).join(" ");
}

export async function runPipeline(url, recording) {
  const sluice = new Sluice({ url });
  // Submitted before any worker runs (as an API would, ahead of its workers): the later stages wait.
  const transcribe = await sluice.queue("transcribe").submit({ recording });
  const summary = await sluice.queue("summarise").submit({}, { dependsOn: [transcribe.id] });
  const notify = await sluice.queue("notify").submit({ to: "team@example.com" }, { dependsOn: [summary.id] });
  console.log(`submitted: transcribe ${transcribe.job.status}, summarise ${summary.job.status}, notify ${notify.job.status}`);
  const workers = [
    sluice.queue("transcribe").work(async (job) => ({ text: (await readFile(job.input.recording.replace(/\.\w+$/, ".txt"), "utf8")).trim() })),
    sluice.queue("summarise").work(async (job) => ({ summary: summarise(job.parents[0].output.text) })),
    sluice.queue("notify").work(async (job) => ({ message: `To ${job.input.to}: ${job.parents[0].output.summary}` })),
  ];
  try {
    const done = await notify.wait({ timeoutMs: 60_000 });
    if (done.status !== "succeeded") throw new Error(`notify ended ${done.status}: ${done.error?.message}`);
    return done.output.message;
  } finally {
    await Promise.all(workers.map((w) => w.close()));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const url = process.argv[2] ?? "http://127.0.0.1:9324";
  const recording = process.argv[3] ?? fileURLToPath(new URL("standup.wav", import.meta.url));
  console.log(await runPipeline(url, recording));
}
