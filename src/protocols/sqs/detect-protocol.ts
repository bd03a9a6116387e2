/**
 * Which SQS protocol a request speaks, and its action. JSON 1.0 is a POST with
 * `X-Amz-Target: AmazonSQS.<Action>` (content type application/x-amz-json-1.0); anything else is
 * the query protocol, whose `Action` parameter may sit in a form body or in the URL's query string.
 * Decided from headers only, so that even a request we can't parse gets its error in the protocol
 * the client will understand.
 */
import { protocolFail } from "./sqs-errors.js";
import { type QueryParams, addFormPairs, emptyQueryParams, topLevelParam } from "./query-codec.js";

export type SqsProtocol = "json" | "query";

const targetPrefix = "AmazonSQS.";

export function detectProtocol(headers: { target: string | undefined; contentType: string | undefined }): SqsProtocol {
  if (headers.target !== undefined) return "json";
  if (headers.contentType !== undefined && headers.contentType.startsWith("application/x-amz-json")) return "json";
  return "query";
}

/** The action named by a JSON request's X-Amz-Target. */
export function jsonAction(target: string | undefined): string {
  if (!target) protocolFail("MissingAction", "The request must contain the header X-Amz-Target.");
  if (!target.startsWith(targetPrefix)) protocolFail("InvalidAction", `The action or operation requested is invalid: ${target}.`);
  return target.slice(targetPrefix.length);
}

/**
 * The parameters of a query request: the URL's query string, then a form body (a body that is not
 * form-encoded is ignored, as SQS does for GETs).
 */
export function queryParams(p: { rawQuery: string; body: string; contentType: string | undefined }): { action: string; params: QueryParams } {
  const params = emptyQueryParams();
  addFormPairs(params, p.rawQuery);
  const isForm = p.contentType === undefined || p.contentType.startsWith("application/x-www-form-urlencoded");
  if (isForm) addFormPairs(params, p.body);
  const action = topLevelParam(params, "Action");
  if (!action) protocolFail("MissingAction", "The request must contain the parameter Action.");
  return { action, params };
}
