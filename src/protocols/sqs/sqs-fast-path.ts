/**
 * SQS requests POSTed to `/` — JSON protocol (`X-Amz-Target`, what every current SDK sends) and
 * query protocol with a form body (what SDKs of the query era send) — answered on node:http
 * directly, ahead of fastify's routing, hooks and reply machinery: the same handler and the same
 * responses as the fastify route (sqs-routes.ts), for less CPU per message
 * (docs/benchmarks-history.md). Everything else goes on to fastify.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { SqsProtocol } from "./detect-protocol.js";
import { type RequestObserver, requestTraceOf } from "../http/request-outcome.js";
import type { CredentialsSource } from "../auth/principal.js";
import { declaresBody } from "../http/declared-body.js";
import { type SqsHandler, type SqsHttpResponse, errorResponse, responseSignal, unsignedWhileRequired } from "./sqs-handler.js";
import { protocolErrors, sqsErrorForCode } from "./sqs-errors.js";

export interface SqsFastPathOptions {
  handler: SqsHandler;
  bodyLimitBytes: number;
  /** Aborted when the server shuts down: responses then close their connection. */
  shutdownSignal?: AbortSignal;
  /** Told of every request answered here, once its answer is written (logs and metrics). */
  onRequestDone?: RequestObserver;
  /** Report each request's trace context headers too (the server exports traces). */
  traced?: boolean;
  /** Access keys: an unsigned request is refused before its body is read. */
  credentials?: CredentialsSource;
}

/** Takes the request and returns true if it is an SQS POST to `/` (JSON, or a query form); false leaves it alone. */
export type SqsFastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

const metricsProtocol = { json: "sqs_json", query: "sqs_query" } as const;

/** The protocol of a request this path answers, as detectProtocol would name it; undefined for the rest. */
function fastProtocolOf(headers: IncomingHttpHeaders): SqsProtocol | undefined {
  if (typeof headers["x-amz-target"] === "string") return "json";
  const contentType = headers["content-type"];
  return contentType !== undefined && contentType.startsWith("application/x-www-form-urlencoded") ? "query" : undefined;
}

const emptyBody = Buffer.alloc(0);

export function sqsFastPath(opts: SqsFastPathOptions): SqsFastPath {
  const observe = opts.onRequestDone;
  const traced = opts.traced === true;
  const write = (req: IncomingMessage, res: ServerResponse, protocol: SqsProtocol, response: SqsHttpResponse, startedAtMs: number, close = false): void => {
    // content-length first, then the spread: a spread that adds a key makes an object V8 keeps past young GCs (docs/benchmarks-history.md).
    const headers: Record<string, string | number> = { "content-length": Buffer.byteLength(response.body), ...response.headers };
    // As the app's onSend hook does: a response finished during shutdown closes its connection.
    if (close || opts.shutdownSignal?.aborted) headers.connection = "close";
    res.writeHead(response.status, headers).end(response.body);
    if (observe) {
      const details = response.details ?? { protocol: metricsProtocol[protocol], action: "unknown" };
      const durationSeconds = (performance.now() - startedAtMs) / 1000;
      observe(traced ? { ...details, status: response.status, durationSeconds, trace: requestTraceOf(req.headers) } : { ...details, status: response.status, durationSeconds });
    }
  };
  const tooLarge = (req: IncomingMessage, res: ServerResponse, protocol: SqsProtocol, startedAtMs: number): void => {
    const error = { ...protocolErrors.RequestEntityTooLarge, message: "The request body is too large." };
    write(req, res, protocol, { ...errorResponse(protocol, error), details: { protocol: metricsProtocol[protocol], action: "unknown", errorCode: error.shape } }, startedAtMs, true);
  };

  const answer = (req: IncomingMessage, res: ServerResponse, protocol: SqsProtocol, body: Buffer, startedAtMs: number, close = false): void => {
    opts
      .handler({ method: "POST", url: "/", headers: req.headers, body, onQueuePath: false }, responseSignal(res, opts.shutdownSignal))
      .then(
        (response) => write(req, res, protocol, response, startedAtMs, close),
        // The handler turns every error into a response; this is only a last line of defence.
        () => write(req, res, protocol, errorResponse(protocol, { ...sqsErrorForCode.InternalError, message: "We encountered an internal error. Please try again." }), startedAtMs, close),
      )
      // Writing itself failed: nothing left to tell the client; never an unhandled rejection.
      .catch(() => res.destroy());
  };

  return (req, res) => {
    if (req.method !== "POST" || req.url !== "/") return false;
    const protocol = fastProtocolOf(req.headers);
    if (protocol === undefined) return false;
    const startedAtMs = performance.now();
    // Answered from the head alone, and the connection closed: the body is never read.
    if (unsignedWhileRequired(opts.credentials, req.headers, "/")) {
      answer(req, res, protocol, emptyBody, startedAtMs, declaresBody(req.headers));
      return true;
    }
    const declared = Number(req.headers["content-length"]);
    if (declared > opts.bodyLimitBytes) {
      tooLarge(req, res, protocol, startedAtMs);
      req.resume();
      return true;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    let refused = false;
    req.on("data", (chunk: Buffer) => {
      if (refused) return;
      length += chunk.length;
      if (length > opts.bodyLimitBytes) {
        refused = true;
        tooLarge(req, res, protocol, startedAtMs);
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (refused) return;
      answer(req, res, protocol, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length), startedAtMs);
    });
    // A client that goes away mid-body gets no answer; node:http closes the socket.
    req.on("error", () => {});
    return true;
  };
}
