/**
 * The HTTP application: the SQS API plus health endpoints, on one fastify instance. Lean on
 * purpose — fastify's own logger is off (it would log URLs, which carry SQS query bodies); each
 * finished request is reported once, as a RequestOutcome, to the server's logs and metrics.
 * JSON-protocol SQS requests reaching the socket are answered by the SQS fast path before fastify
 * routes them.
 */
import http from "node:http";
import type { Socket } from "node:net";
import Fastify, { type FastifyHttpOptions, type FastifyInstance, type FastifyRequest } from "fastify";
import type { QueueService } from "../core/index.js";
import { dashboardRoutes, redirectBrowserToDashboard } from "../dashboard/index.js";
import { installBearerAuth } from "../protocols/auth/bearer.js";
import type { RequestRate } from "../protocols/auth/request-rate.js";
import type { CredentialsSource } from "../protocols/auth/principal.js";
import { declaresBody } from "../protocols/http/declared-body.js";
import { type RequestDetails, type RequestObserver, loggableQueueName, requestDetails, requestTraceOf, setRequestDetails } from "../protocols/http/request-outcome.js";
import { type JobsRoutesOptions, jobsRoutes } from "../protocols/jobs/index.js";
import { createSqsHandler, sqsFastPath, sqsRoutes } from "../protocols/sqs/index.js";
import { type BackupFn, registerBackupRoute } from "./backup-route.js";
import type { Logger } from "./logger.js";
import { clientErrorHandler, frameworkError, refuseConnect, refuseExpectation, refuseMissingHost, refuseOldHttp, rootErrorHandler, routeNotFound } from "./answers.js";

/** Above SQS's 1 MiB request limit, so oversized requests get SQS's own, specific errors. */
export const bodyLimitBytes = 4 * 1024 * 1024;

/**
 * Against slow-loris clients: a request's head must arrive within 10 s and the whole request
 * within 60 s (node checks every second). Long polls are unaffected: they hold the answer, not
 * the request.
 */
export const headersTimeoutMs = 10_000;
export const requestTimeoutMs = 60_000;
const connectionsCheckingIntervalMs = 1_000;
/** No credentials: anonymous requests (open mode). */
const noCredentials: CredentialsSource = { current: () => undefined };

export interface AppDeps {
  queues: QueueService;
  accountId: string;
  region: string;
  /** Aborted when shutdown starts: long polls end, /readyz turns 503, and the APIs refuse new requests (503 ServiceUnavailable). */
  shutdownSignal: AbortSignal;
  onUnexpectedError: (err: unknown) => void;
  /** Told of every finished request (logs and metrics). */
  onRequestDone?: RequestObserver;
  /** Each request's trace context headers go to onRequestDone too (the server exports traces). */
  traced?: boolean;
  /** POST /v1/backup: the store's online backup (absent: the store has none), and where to stage it. */
  backup?: { take: BackupFn | undefined; dataDir: string; logger: Logger };
  /** Serves GET /metrics (Prometheus text format) when given: everything, or one account's series. */
  metrics?: { render(accountId?: string): Promise<{ contentType: string; body: string }> };
  /** The jobs API (docs/jobs-api.md), when the composition root wires it. */
  jobs?: Omit<JobsRoutesOptions, "shutdownSignal" | "onUnexpectedError" | "queues" | "accountId" | "region">;
  /** Shorter head/request timeouts than the defaults below (tests). */
  httpTimeouts?: { headersMs: number; requestMs: number };
  /** Access keys and tokens; absent or empty, every request is anonymous (open mode). */
  credentials?: CredentialsSource;
  /** Each account's requests-a-second quota, on both APIs. */
  requestRate?: RequestRate;
  /** Why the server should get no new traffic now (`/readyz` answers 503 with it as status), if so. */
  notReady?: () => string | undefined;
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const credentials = deps.credentials ?? noCredentials;
  const sqsOptions = { queues: deps.queues, accountId: deps.accountId, region: deps.region, shutdownSignal: deps.shutdownSignal, onUnexpectedError: deps.onUnexpectedError, credentials, requestRate: deps.requestRate };
  const sqsHandler = createSqsHandler(sqsOptions);
  const fastPath = sqsFastPath({ handler: sqsHandler, bodyLimitBytes, shutdownSignal: deps.shutdownSignal, onRequestDone: deps.onRequestDone, traced: deps.traced, credentials });
  // server.close() reaps the connections idle between requests, but not one that has sent nothing
  // yet: Node counts that as active from its connect (against clients that never send their
  // headers). A client's spare pooled connection — undici opens one when a worker's close()
  // aborts its long polls — then held shutdown for the whole grace period (10 s). Having sent no
  // byte, it has no request to answer: it goes now, as do any accepted from here on.
  const sockets = new Set<Socket>();
  let closing = false;
  const app = Fastify({
    logger: false,
    bodyLimit: bodyLimitBytes,
    // Once close() began, fastify would answer every request itself with its own 503 body, which
    // neither SQS clients nor the jobs SDK understand. Each protocol refuses instead, in its own
    // error shape (ServiceUnavailable), from the shutdown signal, which is aborted before this
    // app closes; the health routes keep answering (/readyz: shutting-down).
    return503OnClosing: false,
    // find-my-way refuses a path parameter over 100 characters (encoded) with its own 414, in
    // neither API's error format — a job id the schema allows (≤ 128 characters) among them. Past
    // Node's default 16 KiB request head no request gets here anyway: the schemas and the SQS
    // handler judge every parameter.
    routerOptions: { maxParamLength: 16 * 1024 },
    requestTimeout: requestTimeoutMs,
    // Coded answers instead of fastify's generic bodies (answers.ts).
    clientErrorHandler,
    frameworkErrors: frameworkError,
    // The server fastify would make (same timeouts), with the SQS fast path in front of its handler.
    serverFactory: (fastifyHandler: http.RequestListener, options: FastifyHttpOptions<http.Server>) => {
      const headersTimeout = deps.httpTimeouts?.headersMs ?? headersTimeoutMs;
      const requestTimeout = deps.httpTimeouts?.requestMs ?? requestTimeoutMs;
      // Without Host, node answers an empty 400 itself: refuseMissingHost gives it a code instead.
      const serverOptions = { headersTimeout, requestTimeout, connectionsCheckingInterval: connectionsCheckingIntervalMs, requireHostHeader: false };
      const server = http.createServer(serverOptions, (req, res) => {
        if (refuseOldHttp(req, res) || refuseMissingHost(req, res) || redirectBrowserToDashboard(req, res)) return;
        if (!fastPath(req, res)) fastifyHandler(req, res);
      });
      server.on("connect", refuseConnect);
      server.on("checkExpectation", refuseExpectation);
      if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
      server.requestTimeout = requestTimeout;
      if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout);
      server.on("connection", (socket: Socket) => {
        if (closing) return void socket.destroy();
        sockets.add(socket);
        socket.once("close", () => sockets.delete(socket));
      });
      return server;
    },
  });

  app.addHook("preClose", async () => {
    closing = true;
    for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
  });

  // A response finished during shutdown closes its connection: server.close() only reaps
  // connections that are idle when it is called, and a kept-alive one would hold it open.
  // A callback hook, not an async one: no promise per request for what shutdown alone needs.
  // So does one sent before its request's body was read (an unauthenticated request refused from
  // its head): node would otherwise read and drop that body, however large, to reuse the connection.
  app.addHook("onSend", (request, reply, payload, done) => {
    if (deps.shutdownSignal.aborted || (!request.raw.complete && declaresBody(request.headers))) reply.header("connection", "close");
    done(null, payload);
  });

  if (deps.onRequestDone) reportRequests(app, deps.onRequestDone, deps.traced === true);
  installBearerAuth(app, { credentials, defaultAccountId: deps.accountId });
  app.setNotFoundHandler(routeNotFound);
  // `/<account>/<queue>` is an SQS queue URL, so `/v1/<typo>` would get SQS's MissingAction; under
  // /v1 (the jobs API) an unknown path is the not-found answer, as deeper ones are.
  app.all("/v1/*", routeNotFound);
  app.setErrorHandler(rootErrorHandler(deps.onUnexpectedError));

  app.get("/healthz", { config: { auth: "open" } }, async () => ({ status: "ok" }));
  if (deps.backup) registerBackupRoute(app, { backup: deps.backup.take, dataDir: deps.backup.dataDir, logger: deps.backup.logger });
  const metrics = deps.metrics;
  if (metrics) {
    // The server's own account's tokens (and open mode) see everything; another account's see
    // the series of its own queues only (docs/security.md, "Accounts").
    app.get("/metrics", { config: { scope: "read", anyAccount: true } }, async (request, reply) => {
      const accountId = request.principal?.accountId;
      const { contentType, body } = await metrics.render(accountId === undefined || accountId === deps.accountId ? undefined : accountId);
      return reply.type(contentType).send(body);
    });
  }
  app.get("/readyz", { config: { auth: "open" } }, async (_request, reply) => {
    if (deps.shutdownSignal.aborted) return reply.code(503).send({ status: "shutting-down" });
    const reason = deps.notReady?.();
    if (reason !== undefined) return reply.code(503).send({ status: reason });
    return { status: "ready" };
  });

  void app.register(sqsRoutes, { ...sqsOptions, handler: sqsHandler, bodyLimitBytes });
  void app.register(dashboardRoutes);
  if (deps.jobs) void app.register(jobsRoutes, { ...deps.jobs, requestRate: deps.requestRate, queues: deps.queues, accountId: deps.accountId, region: deps.region, shutdownSignal: deps.shutdownSignal, onUnexpectedError: deps.onUnexpectedError });
  return app;
}

/** The JSON API lives under /v1 (jobs and admin routes alike); everything else non-SQS is plain HTTP. */
function protocolOfRoute(url: string | undefined): "jobs" | "http" {
  return url !== undefined && (url.startsWith("/v1/") || url === "/openapi.json") ? "jobs" : "http";
}

/** `{"error":{"code":…}}`'s code, or the status when an answer has no such body (fastify's own). */
function errorCodeOf(status: number, payload: unknown): string {
  if (typeof payload === "string" && payload.startsWith('{"error"')) {
    try {
      const code = (JSON.parse(payload) as { error?: { code?: unknown } }).error?.code;
      if (typeof code === "string") return code;
    } catch {
      // not the documented shape: fall through to the status
    }
  }
  return `HTTP${status}`;
}

/**
 * Every request fastify answers is reported once it finished: the SQS routes leave their own
 * details (action, error shape); other routes are named by method and route pattern — a bounded
 * set, never the URL as sent.
 */
function reportRequests(app: FastifyInstance, observe: RequestObserver, traced: boolean): void {
  const routeDetails = (request: FastifyRequest): RequestDetails => {
    const url = request.routeOptions.url;
    return {
      protocol: protocolOfRoute(url),
      action: `${request.method} ${url ?? "(no route)"}`,
      queue: loggableQueueName((request.params as Record<string, string> | undefined)?.queue),
      // Set on the jobs and admin routes that work on one account, once the account is decided.
      account: request.actingAccountId,
    };
  };
  // Callback hooks, not async ones: no promise per request on the jobs API's hot path.
  app.addHook("onSend", (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && !requestDetails(request.raw)) {
      setRequestDetails(request.raw, { ...routeDetails(request), errorCode: errorCodeOf(reply.statusCode, payload) });
    }
    done(null, payload);
  });
  app.addHook("onResponse", (request, reply, done) => {
    const details = requestDetails(request.raw) ?? routeDetails(request);
    const durationSeconds = reply.elapsedTime / 1000;
    observe(traced ? { ...details, status: reply.statusCode, durationSeconds, trace: requestTraceOf(request.headers) } : { ...details, status: reply.statusCode, durationSeconds });
    done();
  });
}
