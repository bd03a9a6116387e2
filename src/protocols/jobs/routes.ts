/**
 * The jobs API on fastify: every route of route-specs.ts, validated by its schemas, answered by
 * core's JobService. Registered as an encapsulated plugin, so its error handler and hooks touch
 * only these routes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { SluiceError, fail, isTerminal, outputLimits, parseIdempotencyKey, traceContextOf, type AccountJobs, type LeaseAckInput, type JobQueueSettingsPatch, type SubmitInput, type JobError, type JobStatus, type JobRecord } from "../../core/index.js";
import { onClientGone } from "../http/client-gone.js";
import { disconnectSignal } from "./disconnect-signal.js";
import { unescapeDotSegmentParams } from "./dot-segments.js";
import { errorAnswerOf } from "./http-errors.js";
import { acceptEmptyJsonBodies, missingBodyMessage } from "./json-body.js";
import { buildOpenApiDocument } from "./openapi.js";
import { adminHandlers } from "./admin-routes.js";
import { adminRouteSpecs } from "./admin-route-specs.js";
import { type Handler, type JobsRoutesOptions, type Request, resolveStoreAccount, sendJson } from "./route-handler.js";
import { type RouteSpec, routeSpecs } from "./route-specs.js";
import { sseHeaders, streamEvents } from "./sse.js";
import { type SubmitBatchEntry, submitBatchNow, submitBatchStreaming } from "./submit-batch.js";
import { firstUnknownField } from "./unknown-fields.js";
import { checkWebhookTarget } from "./webhooks/url-policy.js";
import { jobJson, queueWire } from "./wire.js";
import { isoTime } from "./iso-time.js";
import { scheduleHandlers } from "./schedule-handlers.js";
import { batchHandlers } from "./batch-handlers.js";
import { blobBytesRoutes, blobHandlers, hasAttachments, jobDownloadUrls } from "./blob-handlers.js";
import { blobBytesQuery, blobParams } from "./blob-schemas.js";
import { jobsValidatorCompiler } from "./validator.js";

export type { JobsRoutesOptions } from "./route-handler.js";

/** The lease body as its schema admits it. */
interface LeaseBody {
  max?: number;
  waitSeconds?: number;
  leaseSeconds?: number;
  batchWindowMs?: number;
  labels?: Record<string, string>;
  workerId?: string;
  complete?: Array<{ id: string; leaseId: string; output?: unknown }>;
  fail?: Array<{ id: string; leaseId: string; error: JobError; retryable?: boolean; retryAfterSeconds?: number }>;
}


/** Aborted when the client goes away or the server shuts down: ends long polls early. */
function requestSignal(reply: FastifyReply, shutdown: AbortSignal): AbortSignal {
  const controller = new AbortController();
  if (shutdown.aborted) controller.abort();
  // A listener per request, removed when it ends (AbortSignal.any would pile dependents on `shutdown`).
  const onShutdown = (): void => controller.abort();
  shutdown.addEventListener("abort", onShutdown, { once: true });
  reply.raw.once("close", () => shutdown.removeEventListener("abort", onShutdown));
  onClientGone(reply.raw, () => controller.abort());
  return controller.signal;
}

function handlers(o: JobsRoutesOptions): Record<string, Handler> {
  // Everything a request names — queues, jobs, events, schedules — is its token's account's: the
  // services' views of that account (another account's job or queue is simply not found there).
  const jobsOf = (request: Request): AccountJobs => o.jobs.forAccount(request.storeAccount);
  const openApi = buildOpenApiDocument({ version: o.version });
  return {
    async submitJob(request, reply) {
      const jobs = jobsOf(request);
      const body = request.body as SubmitInput;
      const header = request.headers["idempotency-key"];
      // node:http joins repeated headers with ", ": count them in the raw list instead.
      if (Array.isArray(header) || headerCount(request.raw.rawHeaders, "idempotency-key") > 1) fail("ValidationFailed", "Send one Idempotency-Key header, not several.");
      const key = header === undefined ? undefined : parseIdempotencyKey(header);
      const traceparent = request.headers.traceparent;
      const trace = traceparent === undefined ? undefined : traceContextOf(String(traceparent), stringHeader(request.headers.tracestate));
      if (body.webhook) await checkWebhookTarget(body.webhook.url, o.webhookPolicy);
      const wait = (request.query.wait as number | undefined) ?? 0;
      const { job, replayed } =
        wait > 0 ? await jobs.submitAndWait(request.params.queue!, body, key, wait, disconnectSignal(reply), trace) : await jobs.submit(request.params.queue!, body, key, trace);
      if (replayed) reply.header("Idempotent-Replayed", "true");
      else reply.header("Location", `/v1/jobs/${encodeURIComponent(job.id)}`);
      return sendJson(reply, replayed ? 200 : 201, `{"job":${jobJson(job)}}`);
    },

    async submitJobs(request, reply) {
      const jobs = jobsOf(request);
      const entries = (request.body as { jobs: SubmitBatchEntry[] }).jobs;
      const wait = (request.query.wait as number | undefined) ?? 0;
      const ctx = { jobs, webhookPolicy: o.webhookPolicy, onUnexpectedError: o.onUnexpectedError, shutdownSignal: o.shutdownSignal };
      if (wait > 0) return submitBatchStreaming(ctx, reply, request.params.queue!, entries, wait);
      return sendJson(reply, 200, await submitBatchNow(ctx, request.params.queue!, entries));
    },

    async getJob(request, reply) {
      const jobs = jobsOf(request);
      const id = request.params.id!;
      const wait = (request.query.wait as number | undefined) ?? 0;
      const job = wait > 0 ? await jobs.wait(id, wait, requestSignal(reply, o.shutdownSignal)) : await jobs.get(id);
      const deliveries = job.webhook ? await o.jobs.webhookDeliveries(id) : [];
      const downloadUrls = hasAttachments(job) ? await jobDownloadUrls(o.blobs, job, request, o.clock.nowMs()) : undefined;
      return sendJson(reply, 200, `{"job":${jobJson(job, { deliveries, downloadUrls })}}`);
    },

    async cancelJob(request, reply) {
      const jobs = jobsOf(request);
      return sendJson(reply, 200, `{"job":${jobJson(await jobs.cancel(request.params.id!))}}`);
    },

    async listJobs(request, reply) {
      const jobs = jobsOf(request);
      const q = request.query as { status?: JobStatus; limit?: number; cursor?: string };
      const page = await jobs.list(request.params.queue!, q);
      return sendJson(reply, 200, `{"jobs":[${page.jobs.map((j) => jobJson(j)).join(",")}],"nextCursor":${JSON.stringify(page.nextCursor ?? null)}}`);
    },

    async streamJobEvents(request, reply) {
      const jobs = jobsOf(request);
      const id = request.params.id!;
      const job = await jobs.get(id); // a missing job is a plain 404, before the stream starts
      const afterId = resumePosition(request);
      // Resuming a finished job's stream with nothing left: 204 tells EventSource not to reconnect.
      if (afterId !== undefined && isTerminal(job.status) && !(await o.jobs.hasEventsAfter(id, afterId))) return reply.code(204).send();
      reply.hijack();
      reply.raw.writeHead(200, sseHeaders());
      await streamEvents(o, reply.raw, { account: jobs.account, jobId: id, afterId, ...(afterId === undefined ? { snapshot: () => jobs.get(id) } : {}) });
    },

    async streamEvents(request, reply) {
      const jobs = jobsOf(request);
      const queue = request.query.queue as string | undefined;
      const afterId = resumePosition(request);
      reply.hijack();
      reply.raw.writeHead(200, sseHeaders());
      await streamEvents(o, reply.raw, { account: jobs.account, queueName: queue, afterId });
    },

    async leaseJobs(request, reply) {
      const jobs = jobsOf(request);
      const { complete, fail: failed, ...body } = request.body as LeaseBody;
      const acks: LeaseAckInput[] = [...(complete ?? []).map((a) => ({ kind: "complete" as const, ...a })), ...(failed ?? []).map((a) => ({ kind: "fail" as const, ...a }))];
      // A request with acks doesn't wait (see leaseWithAcks): no need to watch for a disconnect.
      const signal = acks.length > 0 ? undefined : requestSignal(reply, o.shutdownSignal);
      const { leased, acks: results, parents } = await jobs.leaseWithAcks(request.params.queue!, { ...body, signal }, acks);
      // No promise per lease on the hot path: only leases of jobs with attachments sign URLs.
      const urls = leased.some(hasAttachments) ? await leaseDownloadUrls(o, leased, request) : undefined;
      const jobsJson = `{"jobs":[${leased.map((j) => jobJson(j, { lease: true, parents: parents?.get(j.id), downloadUrls: urls?.get(j.id) })).join(",")}]`;
      if (complete === undefined && failed === undefined) return sendJson(reply, 200, `${jobsJson}}`);
      const resultsJson = JSON.stringify(results.map((r) => (r.ok ? { id: r.id, ok: true } : { id: r.id, ok: false, error: r.error })));
      return sendJson(reply, 200, `${jobsJson},"results":${resultsJson}}`);
    },

    async heartbeatJob(request, reply) {
      const jobs = jobsOf(request);
      const body = request.body as { leaseId: string; leaseSeconds?: number; progress?: number };
      const beat = await jobs.heartbeat(request.params.id!, body);
      return sendJson(reply, 200, JSON.stringify({ cancelRequested: beat.cancelRequested, leaseExpiresAt: new Date(beat.leaseExpiresAtMs).toISOString() }));
    },

    async outputJob(request, reply) {
      const jobs = jobsOf(request);
      const out = await jobs.output(request.params.id!, request.body as { leaseId: string; chunks: unknown });
      return sendJson(reply, 200, `{"cancelRequested":${out.cancelRequested},"chunks":${out.total}}`);
    },

    async getJobOutputChunks(request, reply) {
      const jobs = jobsOf(request);
      const from = (request.query.from as number | undefined) ?? 0;
      const r = await jobs.outputChunks(request.params.id!, { from, limit: outputLimits.readPageMax });
      return sendJson(reply, 200, `{"attempt":${r.attempt},"chunks":[${r.chunksJson.join(",")}],"next":${r.next},"done":${r.done}}`);
    },

    async completeJob(request, reply) {
      const jobs = jobsOf(request);
      const body = request.body as { leaseId: string; output?: unknown; outputAttachments?: Record<string, string> };
      return sendJson(reply, 200, `{"job":${jobJson(await jobs.complete(request.params.id!, body))}}`);
    },

    async failJob(request, reply) {
      const jobs = jobsOf(request);
      const body = request.body as { leaseId: string; error: JobError; retryable?: boolean; retryAfterSeconds?: number };
      return sendJson(reply, 200, `{"job":${jobJson(await jobs.fail(request.params.id!, body))}}`);
    },

    async releaseJob(request, reply) {
      const jobs = jobsOf(request);
      const body = request.body as { leaseId: string };
      return sendJson(reply, 200, `{"job":${jobJson(await jobs.release(request.params.id!, body))}}`);
    },

    async listWorkers(request, reply) {
      const workers = await jobsOf(request).listWorkers();
      const wire = workers.map((w) => ({ workerId: w.workerId, queues: w.queues, labels: w.labels, lastSeenAt: isoTime(w.lastSeenAtMs), running: w.running }));
      return sendJson(reply, 200, JSON.stringify({ workers: wire }));
    },

    async getQueue(request, reply) {
      const jobs = jobsOf(request);
      const info = await jobs.queueInfo(request.params.queue!);
      return sendJson(reply, 200, JSON.stringify({ queue: queueWire(info, o.workersAdvice?.(info)) }));
    },

    async updateQueue(request, reply) {
      const jobs = jobsOf(request);
      const { paused, ...patch } = request.body as JobQueueSettingsPatch & { paused?: boolean };
      const info = await jobs.updateQueueSettings(request.params.queue!, patch, paused);
      return sendJson(reply, 200, JSON.stringify({ queue: queueWire(info, o.workersAdvice?.(info)) }));
    },

    async getOpenApi(_request, reply) {
      return reply.code(200).send(openApi);
    },

    ...scheduleHandlers((request) => o.schedules.forAccount(request.storeAccount), sendJson),
    ...batchHandlers(o, sendJson),
    ...blobHandlers(o.blobs, sendJson),
  };
}

/** Each leased job's attachments' download URLs, valid while its lease is (none for jobs without attachments). */
async function leaseDownloadUrls(o: JobsRoutesOptions, leased: readonly JobRecord[], request: Request): Promise<Map<string, Map<string, string>> | undefined> {
  let out: Map<string, Map<string, string>> | undefined;
  for (const job of leased) {
    const urls = await jobDownloadUrls(o.blobs, job, request, o.clock.nowMs());
    if (urls) (out ??= new Map()).set(job.id, urls);
  }
  return out;
}

function headerCount(rawHeaders: string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) count++;
  return count;
}

/**
 * Where an event stream resumes: after the Last-Event-ID an SSE client sends when it reconnects,
 * else after `?since=`; undefined: from now on. Both are event ids (the schemas checked their form).
 */
function resumePosition(request: Request): number | undefined {
  const header = request.headers["last-event-id"];
  if (typeof header === "string" && header.trim() !== "") return Number(header.trim());
  const since = request.query.since as number | undefined;
  return since;
}

function fastifyPath(spec: RouteSpec): string {
  return spec.path.replace(/\{(\w+)\}/g, ":$1");
}

export async function jobsRoutes(app: FastifyInstance, o: JobsRoutesOptions): Promise<void> {
  // JSON only: a text/plain body would otherwise parse to a string and fail as a schema mismatch.
  app.removeContentTypeParser("text/plain");
  // File uploads: the handler reads the form from the request stream itself (batch-handlers.ts).
  app.addContentTypeParser("multipart/form-data", (_request, _payload, done) => done(null, undefined));
  acceptEmptyJsonBodies(app);
  app.setValidatorCompiler(jobsValidatorCompiler());
  app.setErrorHandler((err, _request, reply) => {
    const { status, body } = errorAnswerOf(err, o.onUnexpectedError);
    // Shutting down: a restarted server is back within seconds (the SDK waits this long, then retries).
    // Over the account's rate: its bucket holds a request again within a second.
    if (status === 503 || body.error.code === "RateLimited") void reply.header("retry-after", "1");
    void reply.code(status).type("application/json; charset=utf-8").send(JSON.stringify(body));
  });
  // Shutdown has begun: a request arriving now is refused before its body is read or anything is
  // done (one in flight finishes); the SDK retries the 503.
  app.addHook("onRequest", (_request, _reply, done) => done(o.shutdownSignal.aborted ? new SluiceError("ServiceUnavailable") : undefined));
  app.decorateRequest("storeAccount", "");
  app.decorateRequest("actingAccountId", undefined);
  const resolveAccount = resolveStoreAccount(o.accountId, o.requestRate);
  const byOperation = { ...handlers(o), ...adminHandlers(o) };
  // The fs storage's presigned URLs: raw bytes, no bearer token (blob-handlers.ts).
  if (o.blobs?.servesBytes) await app.register(blobBytesRoutes(o.blobs, sendJson, { params: blobParams, querystring: blobBytesQuery }));
  for (const spec of [...routeSpecs, ...adminRouteSpecs]) {
    if (spec.signedUrl) continue;
    const handler = byOperation[spec.operationId];
    if (!handler) throw new Error(`no handler for ${spec.operationId}`);
    const bodySchema = spec.body;
    const preValidation = routePreValidation(spec);
    app.route({
      method: spec.method,
      url: fastifyPath(spec),
      schema: {
        ...(spec.params ? { params: spec.params } : {}),
        ...(spec.querystring ? { querystring: spec.querystring } : {}),
        ...(spec.headers ? { headers: spec.headers } : {}),
        ...(bodySchema ? { body: bodySchema } : {}),
      },
      // Every route here works on the caller's own account (handlers resolve names and ids in it).
      config: { scope: spec.scopes, anyAccount: true },
      ...(spec.perAccount === false ? {} : { onRequest: resolveAccount }),
      ...(preValidation ? { preValidation } : {}),
      handler: handler as (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
    });
  }
}

/**
 * What a route checks before its schemas run, only where it has something to check (one hook
 * call on the hot routes, none on the others): `%2E%2E` in a path parameter is `..`
 * (dot-segments.ts); then a body that is missing or empty (json-body.ts: one clear answer for
 * both, not Ajv's "body must be object") or has a field its schema lacks.
 */
function routePreValidation(spec: RouteSpec): ((request: FastifyRequest) => Promise<void>) | undefined {
  const { params, body: bodySchema } = spec;
  if (!params && !bodySchema) return undefined;
  return async (request) => {
    if (params) unescapeDotSegmentParams(request.params);
    if (!bodySchema) return;
    if (request.body === undefined) fail("ValidationFailed", missingBodyMessage(bodySchema));
    const unknown = firstUnknownField(request.body, bodySchema);
    if (unknown) fail("ValidationFailed", `${unknown} is not a field of this request.`);
  };
}

/** A header's value as one string (node:http joins repeated ones), or undefined. */
function stringHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(",") : value;
}
