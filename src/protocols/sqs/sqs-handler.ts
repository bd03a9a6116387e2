/**
 * One SQS request, independent of the HTTP framework: protocol detection, decoding, the action,
 * and the encoded response or error. The fastify routes (sqs-routes.ts) and the node:http fast
 * path for JSON requests (sqs-fast-path.ts) both answer through it, so they can't disagree.
 */
import { isAscii } from "node:buffer";
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { errorCatalog, fail, type QueueService } from "../../core/index.js";
import type { CredentialsSource, Principal } from "../auth/principal.js";
import type { RequestRate } from "../auth/request-rate.js";
import { type SigV4FailureKind, SigV4Verifier } from "../auth/sigv4.js";
import { onClientGone } from "../http/client-gone.js";
import { decodeUtf8 } from "../http/json-depth.js";
import { AccountScopes } from "./account-scope.js";
import { scopesFor } from "./action-scopes.js";
import { type RequestDetails, loggableQueueName } from "../http/request-outcome.js";
import type { ActionContext } from "./action.js";
import { sqsActions } from "./actions/index.js";
import { type SqsProtocol, detectProtocol, jsonAction, queryParams } from "./detect-protocol.js";
import { decodeJsonInput, encodeJsonError, jsonContentType, plainJsonStrings } from "./json-codec.js";
import { decodeQueryInput } from "./query-codec.js";
import { actsOnQueue } from "./query-shapes.js";
import type { SqsIdentity } from "./queue-url.js";
import { type ProtocolErrorName, type SqsWireError, inQueryWording, protocolFail, sqsErrorForCode, toSqsWireError } from "./sqs-errors.js";
import type { WireObject } from "./wire-input.js";
import { xmlErrorResponse, xmlResponse } from "./xml.js";

export interface SqsHandlerOptions {
  queues: QueueService;
  accountId: string;
  region: string;
  /**
   * Aborted when the server shuts down: long polls end at once, and requests handled from then on
   * are refused with ServiceUnavailable (503, which every SQS client retries) without being run.
   */
  shutdownSignal?: AbortSignal;
  /** Where unexpected (non-SQS) errors are reported; the client only sees InternalError. */
  onUnexpectedError?: (err: unknown) => void;
  /** Access keys: with credentials configured every request must be signed (SigV4). */
  credentials?: CredentialsSource;
  /** The wall clock that signatures are dated against (tests move it). */
  signatureNowMs?: () => number;
  /** Each account's requests-a-second quota, taken once per request before its body is decoded. */
  requestRate?: RequestRate;
}

export interface SqsHttpRequest {
  method: string;
  /** The request target as sent: path and query string. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body: signatures cover its bytes, and it must be valid UTF-8. */
  body: Buffer;
  /** True on the queue URL path (`/<account>/<queue>`), where the path names the queue. */
  onQueuePath: boolean;
}

export interface SqsHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** What the server's logs and metrics are told (not sent). */
  details?: RequestDetails;
}

const xmlContentType = "text/xml";

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function protocolOf(headers: IncomingHttpHeaders): SqsProtocol {
  return detectProtocol({ target: header(headers, "x-amz-target"), contentType: header(headers, "content-type") });
}

/** The response for an error, in the protocol the client spoke. */
export function errorResponse(protocol: SqsProtocol, error: SqsWireError, requestId: string = randomUUID()): SqsHttpResponse {
  if (protocol === "json") {
    const { body, queryErrorHeader } = encodeJsonError(error);
    return { status: error.httpStatus, headers: { "x-amzn-requestid": requestId, "content-type": jsonContentType, "x-amzn-query-error": queryErrorHeader }, body };
  }
  return { status: error.httpStatus, headers: { "x-amzn-requestid": requestId, "content-type": xmlContentType }, body: xmlErrorResponse(inQueryWording(error), requestId) };
}

/** The error response for a request with these headers, in the protocol they name. */
export function sqsErrorResponse(headers: IncomingHttpHeaders, error: SqsWireError): SqsHttpResponse {
  return errorResponse(protocolOf(headers), error);
}

/**
 * A lazily created signal that fires when the response closes before it was sent (the client
 * left) or the server shuts down. Lazy: only long polls ask for it.
 */
export function responseSignal(res: ServerResponse, shutdown: AbortSignal | undefined): () => AbortSignal {
  let controller: AbortController | undefined;
  return () => {
    if (controller) return controller.signal;
    const c = (controller = new AbortController());
    const abort = (): void => c.abort();
    if (shutdown?.aborted) c.abort();
    shutdown?.addEventListener("abort", abort, { once: true });
    res.once("close", () => shutdown?.removeEventListener("abort", abort));
    // Aborting is not free (it builds a DOMException), so a normal finish doesn't.
    onClientGone(res, abort);
    return c.signal;
  };
}

export type SqsHandler = (request: SqsHttpRequest, signal: () => AbortSignal) => Promise<SqsHttpResponse>;

const presignedParam = /[?&]X-Amz-(Signature|Credential|Algorithm)=/;

/**
 * A request that carries no signature at all, where credentials are configured: refused before its
 * body is read (the handler's answer doesn't depend on it), so a large declared body isn't waited for.
 */
export function unsignedWhileRequired(credentials: CredentialsSource | undefined, headers: IncomingHttpHeaders, url: string): boolean {
  return headers.authorization === undefined && credentials?.current() !== undefined && !presignedParam.test(url);
}

const shuttingDown: SqsWireError = { ...sqsErrorForCode.ServiceUnavailable, message: errorCatalog.ServiceUnavailable };

/** A 503 says when to come back (RFC 9110 Retry-After): a restarting server is back within seconds. */
function retryShortly(res: SqsHttpResponse): SqsHttpResponse {
  return { ...res, headers: { ...res.headers, "retry-after": "1" } };
}

/** Which SQS error answers which signature failure (docs/security.md). */
const authErrorOf: Record<SigV4FailureKind, ProtocolErrorName> = {
  missing: "MissingAuthenticationToken",
  incomplete: "IncompleteSignature",
  unknownKey: "InvalidClientTokenId",
  badSignature: "SignatureDoesNotMatch",
  expired: "RequestExpired",
  malformedQuery: "MalformedQueryString",
};

/** The request's body as text; bytes that are not UTF-8 are refused, never replaced by U+FFFD. */
function bodyText(body: Buffer, protocol: SqsProtocol, target: string | undefined, ascii: boolean): string {
  if (body.length === 0) return "";
  // ASCII is UTF-8 as it is: no decoder's checks needed.
  if (ascii) return body.toString("latin1");
  const text = decodeUtf8(body);
  if (text !== undefined) return text;
  // A message body is where SQS names the problem InvalidMessageContents; elsewhere the body is junk.
  if (protocol === "json" && target !== undefined && target.startsWith("AmazonSQS.SendMessage")) fail("InvalidMessageContents", "The request body is not valid UTF-8.");
  protocolFail(protocol === "json" ? "SerializationException" : "MalformedQueryString", "The request body is not valid UTF-8.");
}

const metricsProtocol = { json: "sqs_json", query: "sqs_query" } as const;

/** The queue a request names (QueueUrl's last segment, or CreateQueue/GetQueueUrl's QueueName), if well formed. */
function queueOf(input: WireObject): string | undefined {
  const url = input.QueueUrl;
  if (typeof url === "string") return loggableQueueName(url.slice(url.lastIndexOf("/") + 1));
  return typeof input.QueueName === "string" ? loggableQueueName(input.QueueName) : undefined;
}

export function createSqsHandler(opts: SqsHandlerOptions): SqsHandler {
  const scopes = new AccountScopes({ queues: opts.queues, defaultAccountId: opts.accountId, region: opts.region });
  const onUnexpected = opts.onUnexpectedError ?? ((err: unknown) => console.error("sluice: unexpected error in SQS action", err));
  const verifier = new SigV4Verifier();
  const signatureNowMs = opts.signatureNowMs ?? Date.now;

  /** Who signed the request; undefined in open mode (no credentials configured). */
  function authenticate(request: SqsHttpRequest): Principal | undefined {
    const credentials = opts.credentials?.current();
    if (credentials === undefined) return undefined;
    const result = verifier.verify({ method: request.method, url: request.url, headers: request.headers, body: request.body }, credentials, signatureNowMs());
    if (!result.ok) protocolFail(authErrorOf[result.failure.kind], result.failure.message);
    return result.principal;
  }

  return async (request, signal) => {
    const requestId = randomUUID();
    const target = header(request.headers, "x-amz-target");
    const contentType = header(request.headers, "content-type");
    const protocol = detectProtocol({ target, contentType });
    // Bounded for metrics: a name the client made up is "unknown" until it is a registered action.
    const details: RequestDetails = { protocol: metricsProtocol[protocol], action: "unknown" };
    // Here, not in front of one route: the fast path and the fastify routes refuse alike.
    if (opts.shutdownSignal?.aborted) return { ...retryShortly(errorResponse(protocol, shuttingDown, requestId)), details: { ...details, errorCode: shuttingDown.shape } };
    let input: WireObject = {};
    // The account the request works on, once known: its errors name that account's ARNs (sqs-wording.ts).
    let identity: SqsIdentity | undefined;
    try {
      // Before anything is decoded: an unsigned request learns nothing but that it must sign.
      const principal = authenticate(request);
      opts.requestRate?.take(principal?.accountId ?? opts.accountId);
      const ascii = isAscii(request.body);
      const body = bodyText(request.body, protocol, target, ascii);
      const plainStrings = protocol === "json" && plainJsonStrings(request.body, ascii);
      let action: string;
      if (protocol === "json") {
        action = jsonAction(target);
        input = decodeJsonInput(body);
      } else {
        const q = request.url.indexOf("?");
        const parsed = queryParams({ rawQuery: q === -1 ? "" : request.url.slice(q + 1), body, contentType });
        action = parsed.action;
        input = sqsActions.has(action) ? decodeQueryInput(action, parsed.params) : {};
      }
      const registered = sqsActions.get(action) ?? protocolFail("InvalidAction", `The action ${action} is not valid for this endpoint.`);
      details.action = action;
      if (principal !== undefined) {
        const needed = scopesFor(action);
        if (!needed.some((scope) => principal.scopes.has(scope))) {
          protocolFail("AccessDenied", `The access key ${principal.name} is not allowed to call ${action} (it needs the scope ${needed.join(" or ")}).`);
        }
      }
      // On the queue URL path the path names the queue, and QueueUrl may be left out. Actions that
      // take no queue are not valid there, as SQS answers (LocalStack's AWS-validated
      // test_get_create_queue_fails, test_get_list_queues_fails).
      if (request.onQueuePath && !actsOnQueue(action)) protocolFail("InvalidAction", `The action ${action} is not valid for this endpoint.`);
      if (request.onQueuePath && input.QueueUrl === undefined) {
        const q = request.url.indexOf("?");
        input.QueueUrl = q === -1 ? request.url : request.url.slice(0, q);
      }
      const baseUrl = `http://${header(request.headers, "host") ?? "localhost"}`;
      const scope = await scopes.resolve({ callerAccountId: principal?.accountId, action, input, baseUrl });
      identity = scope.identity;
      const ctx: ActionContext = { queues: scope.queues, identity, baseUrl, signal, plainStrings };
      const result = await registered.invoke(input, ctx);
      details.queue = queueOf(input);
      details.account = identity.accountId;
      if (protocol === "json") return { status: 200, headers: { "x-amzn-requestid": requestId, "content-type": jsonContentType }, body: result.json(), details };
      return { status: 200, headers: { "x-amzn-requestid": requestId, "content-type": xmlContentType }, body: xmlResponse(action, result.xml(), requestId), details };
    } catch (err) {
      const error = toSqsWireError(err, onUnexpected, identity);
      details.queue = queueOf(input);
      // Known once the request's scope was resolved (not for a refused signature or another account's queue).
      details.account = identity?.accountId;
      details.errorCode = error.shape;
      const response = errorResponse(protocol, error, requestId);
      // A full disk (StorageFull) or an unreachable database: temporary, so say when to retry.
      return { ...(error.httpStatus === 503 ? retryShortly(response) : response), details };
    }
  };
}
