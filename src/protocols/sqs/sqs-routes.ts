/**
 * The SQS API as a fastify plugin: `/` and the queue URL path `/<account>/<queue>`, GET and POST,
 * both protocols. Register it encapsulated (`app.register(sqsRoutes, opts)`): it replaces the body
 * parsers of its own context with one that hands the codecs the raw body. (JSON-protocol POSTs to
 * `/` that reach a real socket are answered before fastify, by sqs-fast-path.ts, with the same
 * handler.)
 */
import { setMaxListeners } from "node:events";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { setRequestDetails } from "../http/request-outcome.js";
import { type SqsHandler, type SqsHandlerOptions, type SqsHttpResponse, createSqsHandler, errorResponse, protocolOf, responseSignal, unsignedWhileRequired } from "./sqs-handler.js";
import { type SqsWireError, protocolErrors, toSqsWireError } from "./sqs-errors.js";

export interface SqsRoutesOptions extends SqsHandlerOptions {
  /** Above SQS's 1 MiB so oversized requests get SQS's own size errors. */
  bodyLimitBytes?: number;
  /** The handler to answer with; built from these options when absent. */
  handler?: SqsHandler;
}

const defaultSqsBodyLimitBytes = 4 * 1024 * 1024;
const emptyBody = Buffer.alloc(0);

/**
 * A Buffer, so fastify sends SQS's content type as it is (it appends a charset to a string's).
 * The request's details go to the app's response hook (logs and metrics).
 */
function send(reply: FastifyReply, response: SqsHttpResponse): FastifyReply {
  if (response.details) setRequestDetails(reply.request.raw, response.details);
  return reply.code(response.status).headers(response.headers).send(Buffer.from(response.body));
}

/** The error for a request fastify refused before our handler ran (too large, bad content type). */
function refusedRequestError(status: number, message: string, onUnexpected: (err: unknown) => void, err: unknown): SqsWireError {
  if (status === 413) return { ...protocolErrors.RequestEntityTooLarge, message: "The request body is too large." };
  if (status < 500) return { ...protocolErrors.MalformedQueryString, httpStatus: status, message };
  return toSqsWireError(err, onUnexpected);
}

export async function sqsRoutes(app: FastifyInstance, opts: SqsRoutesOptions): Promise<void> {
  const onUnexpected = opts.onUnexpectedError ?? ((err: unknown) => console.error("sluice: unexpected error in SQS action", err));
  const handle = opts.handler ?? createSqsHandler(opts);
  // Every pending long poll listens to the shutdown signal: hundreds are normal, not a leak.
  if (opts.shutdownSignal) setMaxListeners(0, opts.shutdownSignal);

  app.removeAllContentTypeParsers();
  // Bytes, not text: the signature covers them, and the handler refuses any that aren't UTF-8.
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: opts.bodyLimitBytes ?? defaultSqsBodyLimitBytes }, (_request, body, done) => done(null, body));

  // Errors fastify raises before our handler runs (body too large, unparseable content type).
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const protocol = protocolOf(request.headers);
    const error = refusedRequestError(err.statusCode ?? 500, err.message, onUnexpected, err);
    return send(reply, { ...errorResponse(protocol, error), details: { protocol: protocol === "json" ? "sqs_json" : "sqs_query", action: "unknown", errorCode: error.shape } });
  });

  async function answer(request: FastifyRequest<{ Params: { queueName?: string } }>, reply: FastifyReply, body: Buffer): Promise<FastifyReply> {
    const response = await handle(
      { method: request.method, url: request.raw.url ?? "/", headers: request.headers, body, onQueuePath: request.params.queueName !== undefined },
      responseSignal(reply.raw, opts.shutdownSignal),
    );
    return send(reply, response);
  }

  const route = (request: FastifyRequest<{ Params: { queueName?: string } }>, reply: FastifyReply): Promise<FastifyReply> =>
    answer(request, reply, Buffer.isBuffer(request.body) ? request.body : emptyBody);

  // An unsigned request is answered from its head, before fastify reads the body; the app closes
  // the connection of a response sent while a body is still unread.
  app.addHook("onRequest", (request: FastifyRequest<{ Params: { queueName?: string } }>, reply, done) => {
    if (!unsignedWhileRequired(opts.credentials, request.headers, request.raw.url ?? "/")) return done();
    answer(request, reply, emptyBody).catch(done);
  });

  // With a trailing slash too: an SDK whose endpoint is a queue URL (the PHP SDK's way) appends
  // the JSON protocol's "/" to it, and SQS answers there (LocalStack's AWS-validated
  // test_send_message_via_queue_url_with_json_protocol).
  for (const url of ["/", "/:accountId/:queueName", "/:accountId/:queueName/"]) {
    // Signed with SigV4, checked by the handler: no bearer token (protocols/auth/bearer.ts).
    app.route({ method: ["GET", "POST"], url, config: { auth: "sigv4" }, handler: route });
  }
}
