/** A batch input file's line, checked as OpenAI checks it: the job input it becomes, or what is wrong. */
import { limits } from "../limits.js";
import type { BatchLineError } from "./batch.js";
import type { JsonlLine } from "./jsonl-lines.js";

export type CheckedLine = { blank: true } | { error: BatchLineError } | { customId: string; inputJson: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** `seen`: the custom_ids of the lines before (a duplicate is an error); this line's is added. */
export function checkBatchLine(l: JsonlLine, endpoint: string, seen: Set<string>): CheckedLine {
  const line = l.line;
  if ("tooLong" in l) return { error: { code: "line_too_long", message: `This line is over ${limits.batches.lineMaxBytes} bytes.`, line } };
  if (l.text.trim() === "") return { blank: true };
  let v: unknown;
  try {
    v = JSON.parse(l.text);
  } catch {
    return { error: { code: "invalid_json_line", message: "This line is not parseable as valid JSON.", line } };
  }
  if (!isObject(v)) return { error: { code: "invalid_json_line", message: "This line is not a JSON object.", line } };
  const customId = v.custom_id;
  if (typeof customId !== "string" || customId === "") return { error: { code: "missing_required_parameter", message: "custom_id is required (a non-empty string).", line, param: "custom_id" } };
  if (customId.length > limits.batches.customIdMaxLength) return { error: { code: "invalid_value", message: `custom_id is over ${limits.batches.customIdMaxLength} characters.`, line, param: "custom_id" } };
  if (v.method !== "POST") return { error: { code: "invalid_value", message: 'method must be "POST".', line, param: "method" } };
  if (v.url !== endpoint) return { error: { code: "invalid_url", message: `The url of this line is not the batch's endpoint ${endpoint}.`, line, param: "url" } };
  if (!isObject(v.body)) return { error: { code: "missing_required_parameter", message: "body is required (a JSON object).", line, param: "body" } };
  if (seen.has(customId)) return { error: { code: "duplicate_custom_id", message: `custom_id ${JSON.stringify(customId)} is used by an earlier line.`, line, param: "custom_id" } };
  seen.add(customId);
  return { customId, inputJson: JSON.stringify({ custom_id: customId, method: v.method, url: v.url, body: v.body }) };
}
