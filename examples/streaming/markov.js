/**
 * The "model": a word-level Markov chain of order 2, trained at start on corpus.txt (shipped with
 * the example, so nothing is downloaded). It generates a story one token at a time, the way a
 * language model does. Deterministic for a given prompt (a seeded generator), and the same
 * algorithm as markov.py, so both workers tell the same story for the same prompt.
 */
import { readFileSync } from "node:fs";

const corpus = readFileSync(new URL("corpus.txt", import.meta.url), "utf8");

/** "w1 w2" → the words that followed that pair in the corpus, in order, repeats kept. */
export function train(text) {
  const words = text.split(/\s+/).filter(Boolean);
  const chain = new Map();
  for (let i = 0; i + 2 < words.length; i++) {
    const key = `${words[i]} ${words[i + 1]}`;
    if (!chain.has(key)) chain.set(key, []);
    chain.get(key).push(words[i + 2]);
  }
  // Where a sentence may start: the pairs that follow a word ending one.
  const starts = [];
  for (let i = 0; i + 1 < words.length; i++) if (i === 0 || /[.!?]$/.test(words[i - 1])) starts.push(`${words[i]} ${words[i + 1]}`);
  return { chain, starts };
}

/** FNV-1a of the prompt: the seed, so a prompt always gives the same story. */
function seedOf(prompt) {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(prompt)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h;
}

/** mulberry32: a small seeded generator of floats in [0, 1). */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const model = train(corpus);

/**
 * The story's tokens (each a word with its leading space). Starts from the prompt's last two
 * words when the corpus has them, else from a sentence start; stops at the end of a sentence once
 * `minTokens` are out, or at `maxTokens`.
 */
export function* generate(prompt, { minTokens = 30, maxTokens = 80 } = {}) {
  const rand = random(seedOf(prompt));
  const words = prompt.split(/\s+/).filter(Boolean);
  let key = words.length >= 2 ? `${words[words.length - 2]} ${words[words.length - 1]}` : "";
  if (!model.chain.has(key)) {
    key = model.starts[Math.floor(rand() * model.starts.length)];
    yield ` ${key}`;
  }
  for (let n = 0; n < maxTokens; n++) {
    const next = model.chain.get(key);
    if (!next) return;
    const word = next[Math.floor(rand() * next.length)];
    yield ` ${word}`;
    if (n + 1 >= minTokens && /[.!?]$/.test(word)) return;
    key = `${key.split(" ")[1]} ${word}`;
  }
}
