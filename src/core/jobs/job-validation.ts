/**
 * Checks of a submit beyond what the HTTP schema already guarantees (core is also called
 * in-process, so it never trusts that a schema ran): ranges, sizes, webhook URL shape.
 */
import { fail } from "../errors.js";
import { limits } from "../limits.js";
import { checkJobInteger } from "../job-settings.js";
import { checkLabelSet } from "./requirements.js";
import { type JobError, type JobWebhook, type OnParentFailure, type WebhookEventType, defaultWebhookEvents, onParentFailureModes, webhookEventTypes } from "../job.js";

/** The options a stored submit may carry (a schedule's): a submit's, without its input. */
export type StoredSubmitOptions = Pick<SubmitInput, "priority" | "timeoutSeconds" | "maxAttempts" | "webhook" | "metadata" | "tenant" | "requires">;

export interface SubmitInput {
  input: unknown;
  priority?: number;
  delaySeconds?: number;
  /** An absolute RFC 3339 time before which the job is not leasable (instead of delaySeconds). */
  runAt?: string;
  timeoutSeconds?: number;
  maxAttempts?: number;
  webhook?: { url: string; events?: string[] };
  metadata?: Record<string, unknown>;
  /** Who the job is for (a customer, an API key): fair sharing and per-tenant caps within the queue. */
  tenant?: string;
  /** Jobs that must succeed first: the job waits (status `waiting`) until they have. */
  dependsOn?: string[];
  /** What a failed or canceled parent does to this job: `fail` (default) ends it too; `ignore` runs it once every parent has finished. */
  onParentFailure?: OnParentFailure;
  /** Labels a worker must carry to lease the job (every pair): GPU-aware routing. */
  requires?: Record<string, string>;
  /** Input attachments: name → blob id (POST /v1/blobs), each the account's and uploaded. */
  attachments?: Record<string, string>;
}

/** Tenants follow SQS MessageGroupId's alphabet (a tenant is its job message's group): letters, digits, punctuation. */
const tenantPattern = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]+$/;

export function validateSubmit(s: SubmitInput): void {
  const j = limits.jobs;
  if (s.input === undefined) fail("ValidationFailed", "input is required (any JSON value).");
  if (s.priority !== undefined) checkJobInteger("priority", s.priority, limits.priorityMin, limits.priorityMax);
  if (s.delaySeconds !== undefined) checkJobInteger("delaySeconds", s.delaySeconds, 0, j.delayMaxSeconds);
  if (s.runAt !== undefined) {
    if (s.delaySeconds !== undefined) fail("ValidationFailed", "Give runAt or delaySeconds, not both: each says when the job may first run.");
    runAtMs(s.runAt); // its range against now is checked where the clock is (the submit)
  }
  if (s.timeoutSeconds !== undefined) checkJobInteger("timeoutSeconds", s.timeoutSeconds, 1, j.timeoutMaxSeconds);
  if (s.maxAttempts !== undefined) checkJobInteger("maxAttempts", s.maxAttempts, 1, j.maxAttemptsMax);
  if (s.metadata !== undefined) {
    if (s.metadata === null || typeof s.metadata !== "object" || Array.isArray(s.metadata)) fail("ValidationFailed", "metadata must be a JSON object.");
    const size = Buffer.byteLength(JSON.stringify(s.metadata), "utf8");
    if (size > j.metadataMaxBytes) fail("ValidationFailed", `metadata is ${size} bytes of JSON; at most ${j.metadataMaxBytes} are allowed.`);
  }
  if (s.tenant !== undefined) checkTenant(s.tenant);
  if (s.dependsOn !== undefined) checkDependsOn(s.dependsOn);
  if (s.requires !== undefined) {
    checkLabelSet("requires", s.requires);
    // A tenant's jobs are served by the fair rounds over tenants, which read no requirement classes.
    if (s.tenant !== undefined) fail("ValidationFailed", "requires cannot be combined with tenant: give one or the other.");
  }
  if (s.onParentFailure !== undefined && !(onParentFailureModes as readonly string[]).includes(s.onParentFailure)) {
    fail("ValidationFailed", `onParentFailure must be one of ${onParentFailureModes.join(", ")}; got ${JSON.stringify(s.onParentFailure)}.`);
  }
  if (s.onParentFailure !== undefined && s.dependsOn === undefined) fail("ValidationFailed", "onParentFailure needs dependsOn: it says what a parent's failure does to this job.");
}

export function checkTenant(tenant: string): void {
  const max = limits.jobs.tenantMaxLength;
  if (typeof tenant !== "string" || tenant.length < 1 || tenant.length > max || !tenantPattern.test(tenant)) {
    fail("ValidationFailed", `tenant must be 1–${max} characters of letters, digits and punctuation (no spaces); got ${JSON.stringify(tenant)}.`);
  }
}

/** 1–dependsOnMax distinct job ids; whether they exist is the store's to say, in the submit's write. */
export function checkDependsOn(ids: string[]): void {
  const max = limits.jobs.dependsOnMax;
  if (!Array.isArray(ids) || ids.length < 1 || ids.length > max) fail("ValidationFailed", `dependsOn must list 1–${max} job ids.`);
  const seen = new Set<string>();
  for (const id of ids) {
    if (typeof id !== "string" || id.length < 1 || id.length > 128) fail("ValidationFailed", `dependsOn: ${JSON.stringify(id)} is not a job id.`);
    if (seen.has(id)) fail("ValidationFailed", `dependsOn names job ${id} twice.`);
    seen.add(id);
  }
}

/** The webhook as stored: the URL checked for shape (http/https, absolute) and events defaulted. */
export function normalizeWebhook(w: { url: string; events?: string[] }): JobWebhook {
  if (w.url.length > limits.jobs.webhookUrlMaxLength) fail("ValidationFailed", `webhook.url is longer than ${limits.jobs.webhookUrlMaxLength} characters.`);
  let url: URL;
  try {
    url = new URL(w.url);
  } catch {
    return fail("ValidationFailed", `webhook.url is not an absolute URL: ${w.url}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") fail("ValidationFailed", "webhook.url must be an http or https URL.");
  if (url.username || url.password) fail("ValidationFailed", "webhook.url must not carry credentials.");
  const events = w.events ?? defaultWebhookEvents;
  if (events.length === 0) fail("ValidationFailed", "webhook.events must name at least one event.");
  for (const e of events) {
    if (!(webhookEventTypes as readonly string[]).includes(e)) fail("ValidationFailed", `webhook.events: unknown event ${e}; allowed: ${webhookEventTypes.join(", ")}.`);
  }
  return { url: url.toString(), events: [...new Set(events)] as WebhookEventType[] };
}

export function validateJobError(e: JobError): JobError {
  const j = limits.jobs;
  if (typeof e.message !== "string") fail("ValidationFailed", "error.message must be a string.");
  const message = e.message.length > j.errorMessageMaxLength ? e.message.slice(0, j.errorMessageMaxLength) : e.message;
  if (e.type !== undefined && (typeof e.type !== "string" || e.type.length > j.errorTypeMaxLength)) {
    fail("ValidationFailed", `error.type must be a string of at most ${j.errorTypeMaxLength} characters.`);
  }
  return e.type === undefined ? { message } : { message, type: e.type };
}

export function validateProgress(progress: number | undefined): void {
  if (progress === undefined) return;
  if (typeof progress !== "number" || !Number.isFinite(progress) || progress < 0 || progress > 1) fail("ValidationFailed", "progress must be a number from 0 to 1.");
}

/** RFC 3339 with a time zone (Z or ±hh:mm), as JSON Schema's date-time; anything else is refused. */
const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** The epoch milliseconds of a submit's runAt, or a ValidationFailed naming it. */
export function runAtMs(runAt: string): number {
  const m = typeof runAt === "string" ? rfc3339.exec(runAt) : null;
  // Date.parse rolls 2026-02-30 over to March; a day past its month's end is refused instead.
  const dayOk = m !== null && Number(m[3]) >= 1 && Number(m[3]) <= new Date(Date.UTC(Number(m[1]), Number(m[2]), 0)).getUTCDate();
  const ms = dayOk ? Date.parse(runAt) : NaN;
  if (!Number.isFinite(ms)) fail("ValidationFailed", `runAt must be an RFC 3339 time with a zone, e.g. 2026-05-01T09:00:00Z; got ${JSON.stringify(runAt)}.`);
  return ms;
}

/** runAt against now: at most runAtMaxDays ahead (checked before the queue is made on first use). */
export function checkRunAtHorizon(runAt: string, nowMs: number): void {
  const maxDays = limits.jobs.runAtMaxDays;
  if (runAtMs(runAt) - nowMs > maxDays * 86_400_000) fail("ValidationFailed", `runAt ${runAt} is more than ${maxDays} days ahead.`);
}
