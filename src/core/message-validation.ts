/**
 * Validation of message bodies and attributes, by SQS's rules. Refusals carry a subject: the SQS
 * layer words them as SQS does.
 */
import { type MessageAttributeProblem, fail } from "./errors.js";
import { limits } from "./limits.js";
import type { MessageAttributes, MessageAttributeValue } from "./message.js";

/** SQS allows #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF. */
const invalidCharacter = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
/**
 * Every UTF-16 unit that *might* be invalid (controls, U+FFFE/U+FFFF, any surrogate). Most bodies
 * have none, and this non-unicode scan is cheaper; surrogates (valid in pairs) fall through
 * to the exact test.
 */
const maybeInvalid = /[\x00-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/;

export function hasInvalidCharacters(text: string): boolean {
  return maybeInvalid.test(text) && invalidCharacter.test(text);
}

/** Refuses text with characters messages can't hold; `what` names it ("message body", "job's input"). */
export function checkCharacters(text: string, what: string): void {
  if (hasInvalidCharacters(text)) {
    fail("InvalidMessageContents", `The ${what} has characters outside the allowed set: tab, line feed, carriage return, U+0020 to U+D7FF, U+E000 to U+FFFD, U+10000 to U+10FFFF.`, {
      kind: "invalidCharacters",
    });
  }
}

/** `charactersChecked`: the caller already knows every character is allowed (SendInput.bodyPlain). */
export function validateBody(body: string, charactersChecked = false): void {
  if (body.length === 0) fail("MissingParameter", "A message body must not be empty.", { kind: "messageBodyEmpty" });
  if (!charactersChecked) checkCharacters(body, "message body");
}

const attributeNamePattern = /^[A-Za-z0-9_.-]+$/;
const dataTypePattern = /^(String|Number|Binary)(\.[^\s]+)?$/;
/** SQS numbers: up to 38 significant digits, -10^128 to +10^126. */
const numberPattern = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Whether SQS takes the text as a Number: at most 38 significant digits and a magnitude from
 * 10^-128 to 10^126 (or zero). Read from the decimal text itself — a double can't hold 1e400 or
 * tell 10^126 from a hair above it.
 */
export function isSqsNumber(text: string): boolean {
  if (!numberPattern.test(text)) return false;
  const [mantissa, exponentText] = text.replace(/^[-+]/, "").split(/[eE]/) as [string, string | undefined];
  const [whole = "", fraction = ""] = mantissa.split(".");
  const allDigits = `${whole}${fraction}`;
  const first = allDigits.search(/[1-9]/);
  if (first < 0) return true; // zero
  const significant = allDigits.slice(first).replace(/0+$/, "");
  if (allDigits.replace(/^0+/, "").length > 38) return false;
  // The power of ten of the first significant digit: 12.5e3 → 4, 0.05 → -2.
  const leadingPower = whole.length - 1 - first + Number(exponentText ?? "0");
  if (leadingPower < -128) return false;
  return leadingPower < 126 || (leadingPower === 126 && significant === "1");
}

function attributeFault(problem: MessageAttributeProblem, name: string, dataType: string, message: string): never {
  fail("InvalidParameterValue", message, { kind: "messageAttribute", problem, name, dataType });
}

function validateAttributeName(name: string): void {
  const lower = name.toLowerCase();
  if (
    name.length === 0 ||
    name.length > limits.messageAttributeNameMaxLength ||
    !attributeNamePattern.test(name) ||
    name.startsWith(".") ||
    name.endsWith(".") ||
    name.includes("..") ||
    lower.startsWith("aws.") ||
    lower.startsWith("amazon.")
  ) {
    attributeFault("name", name, "", `The message attribute name ${JSON.stringify(name)} is invalid: 1 to ${limits.messageAttributeNameMaxLength} letters, digits, '_', '-' or '.', no leading, trailing or double '.', no "AWS." or "Amazon." prefix.`);
  }
}

function validateAttributeValue(name: string, value: MessageAttributeValue): void {
  const dataType = value.dataType;
  const named = JSON.stringify(name);
  if (!dataType) attributeFault("typeMissing", name, dataType, `The message attribute ${named} has no data type.`);
  if (!dataTypePattern.test(dataType) || dataType.length > 256) {
    attributeFault("type", name, dataType, `The message attribute ${named} has the data type ${JSON.stringify(dataType)}: it must be String, Number or Binary, optionally followed by ".label".`);
  }
  const base = dataType.split(".")[0];
  if (base === "Binary") {
    if (!value.binaryValue || value.binaryValue.length === 0) attributeFault("binaryValueMissing", name, dataType, `The Binary message attribute ${named} has no binary value.`);
    return;
  }
  if (value.stringValue === undefined || value.stringValue === "") {
    attributeFault("valueMissing", name, dataType, `The ${base} message attribute ${named} has no value (its string value is missing or empty).`);
  }
  if (hasInvalidCharacters(value.stringValue)) attributeFault("characters", name, dataType, `The value of the message attribute ${named} has characters outside the allowed set.`);
  if (base === "Number" && !isSqsNumber(value.stringValue)) {
    attributeFault("notNumber", name, dataType, `The value of the Number message attribute ${named} is not a number of at most 38 digits from -10^128 to 10^126.`);
  }
}

export function validateAttributes(attributes: MessageAttributes): void {
  const names = Object.keys(attributes);
  if (names.length > limits.messageAttributesMax) {
    fail("InvalidParameterValue", `A message has at most ${limits.messageAttributesMax} attributes, got ${names.length}.`, { kind: "messageAttributeCount", value: names.length });
  }
  for (const name of names) {
    validateAttributeName(name);
    validateAttributeValue(name, attributes[name]!);
  }
}

/** The size SQS counts against MaximumMessageSize: body plus each attribute's name, type and value. */
export function messageSizeBytes(body: string, attributes: MessageAttributes): number {
  let size = Buffer.byteLength(body, "utf8");
  for (const [name, value] of Object.entries(attributes)) {
    size += Buffer.byteLength(name, "utf8") + Buffer.byteLength(value.dataType, "utf8");
    size += value.binaryValue ? value.binaryValue.length : Buffer.byteLength(value.stringValue ?? "", "utf8");
  }
  return size;
}
