/**
 * The JSON 1.0 protocol (awsJson1_0 with awsQueryCompatible): request bodies are already in the
 * protocol-neutral form; errors carry both `__type` and the `x-amzn-query-error` header, which
 * recent SDKs need to map query-compatible codes back to their error classes.
 */
import { jsonTooDeep, maxJsonDepth } from "../http/json-depth.js";
import { protocolFail, type SqsWireError } from "./sqs-errors.js";
import { isWireObject, type WireObject } from "./wire-input.js";

export const jsonContentType = "application/x-amz-json-1.0";

export function decodeJsonInput(body: string): WireObject {
  if (body.length === 0) return {};
  if (jsonTooDeep(body)) protocolFail("SerializationException", `The request body nests JSON deeper than ${maxJsonDepth} levels.`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    protocolFail("SerializationException", "The request body is not valid JSON.");
  }
  if (!isWireObject(parsed)) protocolFail("SerializationException", "The request body must be a JSON object.");
  return parsed;
}

export function encodeJsonError(error: SqsWireError): { body: string; queryErrorHeader: string } {
  return {
    body: JSON.stringify({ __type: `com.amazonaws.sqs#${error.shape}`, message: error.message }),
    queryErrorHeader: `${error.queryCode};${error.fault}`,
  };
}
