/**
 * The model: wink-nlp with its English "lite web" model, which ships inside the npm package
 * (no download at run time). Loaded once per process, when the worker module is imported, so
 * every job after the first pays only for inference.
 */
import winkNLP from "wink-nlp";
import model from "wink-eng-lite-web-model";

const nlp = winkNLP(model);
const its = nlp.its;

/** Scores in (-0.05, 0.05) read as neutral: wink's lexicon gives small scores to plain text. */
const neutralBand = 0.05;

/**
 * @param {string} text
 * @returns {{ score: number, label: "positive" | "negative" | "neutral", entities: { text: string, type: string }[] }}
 */
export function analyze(text) {
  const doc = nlp.readDoc(text);
  const score = Math.round(doc.out(its.sentiment) * 1000) / 1000;
  const label = score >= neutralBand ? "positive" : score <= -neutralBand ? "negative" : "neutral";
  const entities = doc
    .entities()
    .out(its.detail)
    .map((e) => ({ text: e.value, type: e.type }));
  return { score, label, entities };
}

/** The text of a job's input `{ text }`, or undefined when the input has no usable text. */
export function textOf(input) {
  const text = input && typeof input === "object" ? input.text : undefined;
  return typeof text === "string" && text.trim() !== "" ? text : undefined;
}
