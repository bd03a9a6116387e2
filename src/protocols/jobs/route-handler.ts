/** What every route handler of this API is, what it is given, and how it answers JSON (shared by routes.ts and admin-routes.ts). */
import type { FastifyReply, FastifyRequest } from "fastify";
import { type BatchService, type BlobService, type Clock, type FileService, type JobQueueInfo, type JobService, type QueueService, type ScheduleService, type WorkersAdvice, fail } from "../../core/index.js";
import type { RequestRate } from "../auth/request-rate.js";
import type { WebhookUrlPolicy } from "./webhooks/url-policy.js";

export interface JobsRoutesOptions {
  jobs: JobService;
  /** The schedules routes (PUT /v1/schedules/{name}, …). */
  schedules: ScheduleService;
  /** The Batch API's routes (POST /v1/files, /v1/batches, …). */
  files: FileService;
  batches: BatchService;
  /** Attachments (POST /v1/blobs, …); absent: those routes answer RouteNotFound and submits naming attachments are refused. */
  blobs?: BlobService;
  clock: Clock;
  webhookPolicy: WebhookUrlPolicy;
  /** Aborted when shutdown starts: long polls answer, event streams end, new requests get 503 ServiceUnavailable. */
  shutdownSignal: AbortSignal;
  onUnexpectedError: (err: unknown) => void;
  /** The server's version (package.json), shown in /openapi.json as info.version. */
  version: string;
  /** The admin routes' (admin-routes.ts): queues peeked, sent to, purged, redriven. */
  queues: QueueService;
  /** For the ARNs the admin routes name queues by (redrive policies, dead-letter sources). */
  accountId: string;
  region: string;
  /** Each account's requests-a-second quota, taken once per request before its body is read. */
  requestRate?: RequestRate;
  /** The autoscaling advisor's numbers for a queue, shown with its stats (GET/PUT /v1/queues/{queue}, the queue list). */
  workersAdvice?: (info: JobQueueInfo) => WorkersAdvice;
}


const accountIdPattern = /^\d{12}$/;

/**
 * The store's name for the account a request acts as: its bearer token's, "" for the server's
 * own (--account-id, and every anonymous request in open mode), so the queues, jobs and schedules
 * made before accounts existed stay its own. The server's own account is the operator's: its
 * tokens may act for any account with the `Sluice-Account: <account id>` header (to look into,
 * or fix, another account's queues and jobs); another account's tokens may name only their own.
 */
function storeAccountOf(request: FastifyRequest, defaultAccountId: string): string {
  const caller = request.principal?.accountId ?? defaultAccountId;
  const header = request.headers["sluice-account"];
  let accountId = caller;
  if (header !== undefined) {
    const named = Array.isArray(header) ? undefined : header.trim();
    if (named === undefined || !accountIdPattern.test(named)) fail("ValidationFailed", "Sluice-Account must be one 12-digit account id.");
    if (named !== caller && caller !== defaultAccountId) {
      fail("AccessDenied", `Only tokens of the server's own account may act for another account (Sluice-Account: ${named}); this token is account ${caller}'s.`);
    }
    accountId = named;
  }
  return accountId === defaultAccountId ? "" : accountId;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The store's name for the account the request acts as (storeAccountOf), set by the route's onRequest hook. */
    storeAccount: string;
    /** The same account as its 12-digit id, for the request log; undefined on routes that serve every account alike. */
    actingAccountId?: string;
  }
}

/**
 * Decides, before the body is read, which account a per-account route acts as: a bad or
 * forbidden Sluice-Account is refused (400 / 403) before anything else is looked at or done.
 */
export function resolveStoreAccount(defaultAccountId: string, requestRate?: RequestRate): (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void {
  // A callback hook, not an async one: no promise per request on the jobs API's hot path.
  return (request, _reply, done) => {
    try {
      // The caller's account pays, also when its operator token acts for another.
      requestRate?.take(request.principal?.accountId ?? defaultAccountId);
      request.storeAccount = storeAccountOf(request, defaultAccountId);
      request.actingAccountId = request.storeAccount === "" ? defaultAccountId : request.storeAccount;
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  };
}

export type Request = FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, unknown>; Body: unknown }>;
export type Handler = (request: Request, reply: FastifyReply) => Promise<unknown>;

export function sendJson(reply: FastifyReply, status: number, json: string): FastifyReply {
  return reply.code(status).type("application/json; charset=utf-8").send(json);
}
