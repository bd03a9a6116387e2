/**
 * The JSON 1.0 protocol (awsJson1_0 with awsQueryCompatible): request bodies are already in the
 * protocol-neutral form; errors carry both `__type` and the `x-amzn-query-error` header, which
 * recent SDKs need to map query-compatible codes back to their error classes.
 */
import { isAscii } from "node:buffer";
import { jsonTooDeep, maxJsonDepth, valueTooDeep } from "../http/json-depth.js";
import { protocolFail, type SqsWireError } from "./sqs-errors.js";
import { SluiceError } from "../../core/index.js";
import { isWireObject, refuseProtoKey, type WireObject } from "./wire-input.js";

export const jsonContentType = "application/x-amz-json-1.0";

const backslash = 0x5c;

/**
 * Whether every string JSON.parse can read from these bytes is ASCII from U+0020 up, without
 * quotes or backslashes: true of ASCII bytes without a backslash, as JSON.parse refuses raw control
 * characters in strings and every other character needs an escape (InputFacts.plainStrings).
 */
export function plainJsonStrings(body: Uint8Array, ascii: boolean = isAscii(body)): boolean {
  return ascii && body.indexOf(backslash) === -1;
}

function tooDeep(): never {
  protocolFail("SerializationException", `The request body nests JSON deeper than ${maxJsonDepth} levels.`);
}

export function decodeJsonInput(body: string): WireObject {
  if (body.length === 0) return {};
  // A reviver only when the text holds the key: it costs a call per value.
  const reviver = body.includes('"__proto__"') ? (key: string, value: unknown): unknown => {
        refuseProtoKey(key);
        return value;
      } : undefined;
  // A reviver recurses, so its text is measured first; otherwise the parsed value is (json-depth.ts).
  if (reviver && jsonTooDeep(body)) tooDeep();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body, reviver);
  } catch (err) {
    if (err instanceof SluiceError) throw err;
    // Invalid and too deep: the depth is what this server has always named first.
    if (jsonTooDeep(body)) tooDeep();
    protocolFail("SerializationException", "The request body is not valid JSON.");
  }
  if (!reviver && valueTooDeep(parsed)) tooDeep();
  if (!isWireObject(parsed)) protocolFail("SerializationException", "The request body must be a JSON object.");
  return parsed;
}

export function encodeJsonError(error: SqsWireError): { body: string; queryErrorHeader: string } {
  return {
    body: JSON.stringify({ __type: `com.amazonaws.sqs#${error.shape}`, message: error.message }),
    queryErrorHeader: `${error.queryCode};${error.fault}`,
  };
}
