/**
 * A JSON text's nesting depth, measured before it is parsed: a body of 5,000 nested arrays parses
 * fine, then overflows the stack in whatever walks it next (JSON.stringify, a validator). Every
 * JSON surface refuses a text deeper than `maxJsonDepth` with a 400 before any recursion.
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

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The body as text, or undefined when its bytes are not valid UTF-8 (never U+FFFD in their place). */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
