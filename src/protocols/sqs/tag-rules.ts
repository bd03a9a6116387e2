/**
 * Queue tags as SQS takes them, in its words: TagQueue needs at least one tag and UntagQueue at
 * least one key; a key has 1–128 characters and a value at most 256 (Unicode characters, as SQS
 * counts them), none of them a character SQS refuses. How many a queue may hold in all (50) is
 * checked where its tags are merged, in core (QueueService.tagQueue, createQueue).
 */
import { fail, limits } from "../../core/index.js";
import { type WireObject, optionalStringList, optionalStringMap, refuseProtoKey } from "./wire-input.js";

const keyLengthMessage = `Tag keys must be between 1 and ${limits.tagKeyMaxLength} characters in length.`;
const valueLengthMessage = `Tag values must be between 0 and ${limits.tagValueMaxLength} characters in length.`;

/** Control characters, lone surrogates and the noncharacters U+FFFE/U+FFFF: never in a tag. */
const forbiddenTagCharacter = /[\u0000-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function checkTagText(what: "key" | "value", text: string): void {
  if (forbiddenTagCharacter.test(text)) {
    fail("InvalidParameterValue", `Tag ${what} ${JSON.stringify(text.slice(0, 128))} is invalid. Reason: it contains a control character (U+0000–U+001F), a lone surrogate, U+FFFE or U+FFFF.`);
  }
}

/** Code points, not UTF-16 units: an emoji is one character of a tag. */
function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function checkTagKey(key: string): void {
  const length = characterCount(key);
  if (length < 1 || length > limits.tagKeyMaxLength) fail("InvalidParameterValue", keyLengthMessage);
}

/** Keys and values within SQS's lengths and characters (CreateQueue's tags, TagQueue's). */
export function checkTags(tags: Record<string, string>): void {
  for (const key in tags) {
    checkTagText("key", key);
    checkTagText("value", tags[key]!);
    checkTagKey(key);
    if (characterCount(tags[key]!) > limits.tagValueMaxLength) fail("InvalidParameterValue", valueLengthMessage);
  }
}

/** TagQueue's Tags: required, and an empty map is none (the query protocol can't even send one). */
export function decodeTags(input: WireObject): Record<string, string> {
  const tags = optionalStringMap(input, "Tags");
  if (tags === undefined || Object.keys(tags).length === 0) fail("MissingParameter", "The request must contain the parameter Tags.");
  checkTags(tags);
  return tags;
}

/**
 * UntagQueue's TagKeys: required (MissingParameter when the member is absent), and an empty list is
 * answered as an empty key, InvalidParameterValue, as SQS answers boto3's `TagKeys=[]` — which the
 * query protocol can't tell from no list at all, so the query codec reads none as [] (query-shapes).
 * Each key is checked as TagQueue checks it: characters, then length.
 */
export function decodeTagKeys(input: WireObject): string[] {
  const keys = optionalStringList(input, "TagKeys");
  if (keys === undefined) fail("MissingParameter", "The request must contain the parameter TagKeys.");
  if (keys.length === 0) fail("InvalidParameterValue", keyLengthMessage);
  // The keys TagQueue would refuse, refused alike (not an untag of a key that can't exist).
  for (const key of keys) {
    refuseProtoKey(key);
    checkTagText("key", key);
    checkTagKey(key);
  }
  return keys;
}
