/**
 * The SQS API as a fastify plugin: `/` and the queue URL path `/<account>/<queue>`, GET and POST,
 * both protocols. Register it encapsulated (`app.register(sqsRoutes, opts)`): it replaces the body
 * parsers of its own context with one that hands the codecs the raw body.
 */
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { QueueService } from "../../core/queue-service.js";
import type { ActionContext } from "./action.js";
import { sqsActions } from "./actions/index.js";
import { type SqsProtocol, detectProtocol, jsonAction, queryParams } from "./detect-protocol.js";
import { decodeJsonInput, encodeJsonError, jsonContentType } from "./json-codec.js";
import { decodeQueryInput } from "./query-codec.js";
import { type SqsWireError, protocolErrors, protocolFail, toSqsWireError } from "./sqs-errors.js";
import type { WireObject } from "./wire-input.js";
import { xmlErrorResponse, xmlResponse } from "./xml.js";

export interface SqsRoutesOptions {
  queues: QueueService;
  accountId: string;
  region: string;
  /** Aborted when the server shuts down: long polls end at once. */
  shutdownSignal?: AbortSignal;
  /** Where unexpected (non-SQS) errors are reported; the client only sees InternalError. */
  onUnexpectedError?: (err: unknown) => void;
  /** Above SQS's 1 MiB so oversized requests get SQS's own size errors. */
  bodyLimitBytes?: number;
}

const xmlContentType = "text/xml";
const defaultBodyLimitBytes = 4 * 1024 * 1024;

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function protocolOf(request: FastifyRequest): SqsProtocol {
  return detectProtocol({ target: header(request, "x-amz-target"), contentType: header(request, "content-type") });
}

function sendError(reply: FastifyReply, protocol: SqsProtocol, error: SqsWireError, requestId: string): FastifyReply {
  reply.code(error.httpStatus).header("x-amzn-requestid", requestId);
  if (protocol === "json") {
    const { body, queryErrorHeader } = encodeJsonError(error);
    return reply.header("content-type", jsonContentType).header("x-amzn-query-error", queryErrorHeader).send(body);
  }
  return reply.header("content-type", xmlContentType).send(xmlErrorResponse(error, requestId));
}

/** A lazily created signal that fires when the response closes early or the server shuts down. */
function requestSignal(reply: FastifyReply, shutdown: AbortSignal | undefined): () => AbortSignal {
  let controller: AbortController | undefined;
  return () => {
    if (controller) return controller.signal;
    const c = (controller = new AbortController());
    const abort = (): void => c.abort();
    if (shutdown?.aborted) c.abort();
    shutdown?.addEventListener("abort", abort, { once: true });
    reply.raw.once("close", () => {
      shutdown?.removeEventListener("abort", abort);
      // Only a response closed before it was sent means the client left; aborting is not free
      // (it builds a DOMException), so a normal finish doesn't.
      if (!reply.raw.writableEnded) c.abort();
    });
    return c.signal;
  };
}

export async function sqsRoutes(app: FastifyInstance, opts: SqsRoutesOptions): Promise<void> {
  const identity = { accountId: opts.accountId, region: opts.region };
  const onUnexpected = opts.onUnexpectedError ?? ((err: unknown) => console.error("sluice: unexpected error in SQS action", err));
  // Every pending long poll listens to the shutdown signal: hundreds are normal, not a leak.
  if (opts.shutdownSignal) setMaxListeners(0, opts.shutdownSignal);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string", bodyLimit: opts.bodyLimitBytes ?? defaultBodyLimitBytes }, (_request, body, done) => done(null, body));

  // Errors fastify raises before our handler runs (body too large, unparseable content type).
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const status = err.statusCode ?? 500;
    const error: SqsWireError =
      status === 413
        ? { ...protocolErrors.RequestEntityTooLarge, message: "The request body is too large." }
        : status < 500
          ? { ...protocolErrors.MalformedQueryString, httpStatus: status, message: err.message }
          : toSqsWireError(err, onUnexpected);
    return sendError(reply, protocolOf(request), error, randomUUID());
  });

  async function handle(request: FastifyRequest<{ Params: { queueName?: string } }>, reply: FastifyReply): Promise<FastifyReply> {
    const requestId = randomUUID();
    const contentType = header(request, "content-type");
    const target = header(request, "x-amz-target");
    const protocol = detectProtocol({ target, contentType });
    try {
      const body = typeof request.body === "string" ? request.body : "";
      let action: string;
      let input: WireObject;
      if (protocol === "json") {
        action = jsonAction(target);
        input = decodeJsonInput(body);
      } else {
        const url = request.raw.url ?? "/";
        const q = url.indexOf("?");
        const parsed = queryParams({ rawQuery: q === -1 ? "" : url.slice(q + 1), body, contentType });
        action = parsed.action;
        input = sqsActions.has(action) ? decodeQueryInput(action, parsed.params) : {};
      }
      const registered = sqsActions.get(action) ?? protocolFail("InvalidAction", `The action ${action} is not valid for this endpoint.`);
      // On the queue URL path the path names the queue, and QueueUrl may be left out.
      if (request.params.queueName !== undefined && input.QueueUrl === undefined) {
        const url = request.raw.url ?? "/";
        const q = url.indexOf("?");
        input.QueueUrl = q === -1 ? url : url.slice(0, q);
      }
      const ctx: ActionContext = {
        queues: opts.queues,
        identity,
        baseUrl: `http://${header(request, "host") ?? "localhost"}`,
        signal: requestSignal(reply, opts.shutdownSignal),
      };
      const result = await registered.invoke(input, ctx);
      reply.header("x-amzn-requestid", requestId);
      if (protocol === "json") return reply.header("content-type", jsonContentType).send(result.json());
      return reply.header("content-type", xmlContentType).send(xmlResponse(action, result.xml(), requestId));
    } catch (err) {
      return sendError(reply, protocol, toSqsWireError(err, onUnexpected), requestId);
    }
  }

  for (const url of ["/", "/:accountId/:queueName"]) {
    app.route({ method: ["GET", "POST"], url, handler: handle });
  }
}
