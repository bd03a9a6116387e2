/** Validation of message bodies and attributes, with SQS's rules and wording. */
import { fail } from "./errors.js";
import { limits } from "./limits.js";
import type { MessageAttributes, MessageAttributeValue } from "./message.js";

/** SQS allows #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF. */
const invalidCharacter = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
/**
 * Every UTF-16 unit that *might* be invalid (controls, U+FFFE/U+FFFF, any surrogate). Most bodies
 * have none, and this non-unicode scan is ~40 % cheaper; surrogates (valid in pairs) fall through
 * to the exact test.
 */
const maybeInvalid = /[\x00-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/;

export function hasInvalidCharacters(text: string): boolean {
  return maybeInvalid.test(text) && invalidCharacter.test(text);
}

export function validateBody(body: string): void {
  if (body.length === 0) fail("MissingParameter", "The request must contain the parameter MessageBody.");
  if (hasInvalidCharacters(body)) {
    fail("InvalidMessageContents", "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF");
  }
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
    fail("InvalidParameterValue", `Message attribute name '${name}' is invalid.`);
  }
}

function validateAttributeValue(name: string, value: MessageAttributeValue): void {
  if (!value.dataType) fail("InvalidParameterValue", `The message attribute '${name}' must contain non-empty message attribute type.`);
  if (!dataTypePattern.test(value.dataType) || value.dataType.length > 256) {
    fail("InvalidParameterValue", `The type of message attribute '${name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String.`);
  }
  const base = value.dataType.split(".")[0];
  if (base === "Binary") {
    if (!value.binaryValue || value.binaryValue.length === 0) {
      fail("InvalidParameterValue", `The message attribute '${name}' with type 'Binary' must use field 'Binary'.`);
    }
    return;
  }
  if (value.stringValue === undefined || value.stringValue === "") {
    fail("InvalidParameterValue", `Message (user) attribute '${name}' must contain a non-empty value of type '${base}'.`);
  }
  if (hasInvalidCharacters(value.stringValue)) {
    fail("InvalidParameterValue", `The message attribute '${name}' contains invalid characters.`);
  }
  if (base === "Number" && !isSqsNumber(value.stringValue)) {
    fail("InvalidParameterValue", `Can't cast the value of message (user) attribute '${name}' to a number.`);
  }
}

export function validateAttributes(attributes: MessageAttributes): void {
  const names = Object.keys(attributes);
  if (names.length > limits.messageAttributesMax) {
    fail("InvalidParameterValue", `Number of message attributes [${names.length}] exceeds the allowed maximum [${limits.messageAttributesMax}].`);
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
