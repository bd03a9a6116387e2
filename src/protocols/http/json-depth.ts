/**
 * JSON nesting depth: a body of 5,000 nested arrays parses fine (V8's JSON.parse does not recurse),
 * then overflows the stack in whatever walks it next (JSON.stringify, a validator, a reviver). Every
 * JSON surface refuses a text deeper than `maxJsonDepth` with a 400 before any recursion: measured
 * on the text before a parse that recurses, or on the parsed value (a walk without recursion, far
 * cheaper than scanning every character of a body of 1 KiB messages) right after one that doesn't.
 */
import { limits } from "../../core/index.js";

export const maxJsonDepth = limits.jsonDepthMax;

/** Whether `text` nests objects/arrays deeper than `max` (strings are skipped, escapes honoured). */
export function jsonTooDeep(text: string, max: number = maxJsonDepth): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/**
 * Whether a parsed JSON value nests objects/arrays deeper than `max`: for the value of a valid JSON
 * text, the same answer as `jsonTooDeep` on that text. An explicit stack, so any depth is safe.
 */
export function valueTooDeep(value: unknown, max: number = maxJsonDepth): boolean {
  if (typeof value !== "object" || value === null) return false;
  const containers: object[] = [value];
  const depths: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop()!;
    const depth = depths.pop()!;
    if (depth > max) return true;
    const items: unknown[] = Array.isArray(container) ? container : Object.values(container);
    for (const item of items) {
      if (typeof item === "object" && item !== null) {
        containers.push(item);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The body as text, or undefined when its bytes are not valid UTF-8 (never U+FFFD in their place). */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
