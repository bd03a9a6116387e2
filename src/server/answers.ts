/**
 * The answers Sluice gives before any route runs — an unknown route, a path fastify can't decode,
 * a request line node:http can't parse, a CONNECT — in the documented shapes: an SQS error for a
 * request that speaks SQS, `{"error":{"code","message"}}` for everything else. Fastify's and
 * node's own bodies (`{"error":"Bad Request","message":"Client Error"}`, an empty 400, a closed
 * connection) carry no code a client can act on.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { ErrorCode } from "../core/index.js";
import { errorAnswerOf } from "../protocols/jobs/index.js";
import { type SqsErrorSpec, protocolErrors, sqsErrorForCode, sqsErrorResponse } from "../protocols/sqs/index.js";

/** Whether a request is meant for the SQS API (so its error must be an SQS error). */
export function speaksSqs(headers: IncomingMessage["headers"], url: string): boolean {
  if (headers["x-amz-target"] !== undefined) return true;
  const contentType = headers["content-type"] ?? "";
  if (contentType.startsWith("application/x-amz-json") || contentType.startsWith("application/x-www-form-urlencoded")) return true;
  const authorization = headers.authorization ?? "";
  return authorization.startsWith("AWS4-") || /[?&](Action|X-Amz-Signature)=/.test(url);
}

export function jsonErrorBody(code: ErrorCode | string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** An answer for `request` in its protocol's shape, status, code and message given. */
export function sendCodedError(request: FastifyRequest, reply: FastifyReply, status: number, code: ErrorCode, sqs: SqsErrorSpec, message: string): FastifyReply {
  if (speaksSqs(request.headers, request.url)) {
    const res = sqsErrorResponse(request.headers, { ...sqs, httpStatus: status, message });
    return reply.code(res.status).headers(res.headers).send(Buffer.from(res.body));
  }
  return reply.code(status).type("application/json; charset=utf-8").send(jsonErrorBody(code, message));
}

/** The not-found handler: no route answers this method and path. */
export function routeNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const message = `No route answers ${request.method} ${request.url.split("?")[0]!.slice(0, 200)}.`;
  return sendCodedError(request, reply, 404, "RouteNotFound", protocolErrors.InvalidAction, message);
}

/** Fastify's framework errors (a path whose percent-escapes don't decode, an over-long parameter). */
export function frameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const message = err.code === "FST_ERR_BAD_URL" ? "The request path has an invalid percent-encoding." : "The request path is not valid.";
  sendCodedError(request, reply, 400, "InvalidRequest", protocolErrors.MalformedQueryString, message);
}

/** The root error handler, for routes registered outside the protocols' own plugins (dashboard, metrics). */
export function rootErrorHandler(onUnexpected: (err: unknown) => void) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const { status, body } = errorAnswerOf(err, onUnexpected);
    if (speaksSqs(request.headers, request.url)) {
      const res = sqsErrorResponse(request.headers, { ...protocolErrors.InvalidAction, httpStatus: status, message: body.error.message });
      return reply.code(res.status).headers(res.headers).send(Buffer.from(res.body));
    }
    return reply.code(status).type("application/json; charset=utf-8").send(JSON.stringify(body));
  };
}

function rawAnswer(status: number, reason: string, body: string): string {
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** node:http could not parse the request (or its head took too long): answer in JSON, then close. */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  let answer: string;
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    answer = rawAnswer(408, "Request Timeout", jsonErrorBody("RequestTimeout", "The request did not arrive in time (headers within 10 s, the whole request within 60 s)."));
  } else if (err.code === "HPE_HEADER_OVERFLOW") {
    answer = rawAnswer(431, "Request Header Fields Too Large", jsonErrorBody("InvalidRequest", "The request's headers are larger than 16 KiB."));
  } else {
    answer = rawAnswer(400, "Bad Request", jsonErrorBody("InvalidRequest", `The request is not valid HTTP/1.1 (${err.code ?? "parse error"}).`));
  }
  if (socket.writable) socket.end(answer);
  socket.destroy();
}

/** A CONNECT (Sluice is no proxy): a coded 405 instead of node's silent close. */
export function refuseConnect(_req: IncomingMessage, socket: Socket): void {
  socket.end(rawAnswer(405, "Method Not Allowed", jsonErrorBody("InvalidRequest", "CONNECT is not supported: Sluice is not a proxy.")));
}

/**
 * A request line without a version (`GET /path`, HTTP/0.9 style) or an HTTP/0.x version: node
 * serves it as HTTP/1.0. Refused with 505, so a malformed request is never carried out.
 */
export function refuseOldHttp(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.httpVersionMajor >= 1) return false;
  const body = jsonErrorBody("InvalidRequest", "Only HTTP/1.0 and HTTP/1.1 requests are served.");
  res.writeHead(505, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body), connection: "close" }).end(body);
  return true;
}

/**
 * An HTTP/1.1 request without a Host header (RFC 9112 §3.2 requires one): node's own answer is a
 * 400 with no body. Refused in the protocol the request speaks, and the connection closed (its
 * body, if any, is not read).
 */
export function refuseMissingHost(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.headers.host !== undefined || req.httpVersionMajor !== 1 || req.httpVersionMinor < 1) return false;
  const message = "An HTTP/1.1 request must carry a Host header.";
  let headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  let body = jsonErrorBody("InvalidRequest", message);
  if (speaksSqs(req.headers, req.url ?? "/")) ({ headers, body } = sqsErrorResponse(req.headers, { ...sqsErrorForCode.InvalidRequest, message }));
  res.writeHead(400, { ...headers, "content-length": Buffer.byteLength(body), connection: "close" }).end(body);
  return true;
}

/** An `Expect` other than 100-continue: node's own 417 has no body at all. */
export function refuseExpectation(_req: IncomingMessage, res: ServerResponse): void {
  const body = jsonErrorBody("InvalidRequest", "The only Expect value served is 100-continue.");
  res.writeHead(417, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body), connection: "close" }).end(body);
}
