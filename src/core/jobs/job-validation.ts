/**
 * Checks of a submit beyond what the HTTP schema already guarantees (core is also called
 * in-process, so it never trusts that a schema ran): ranges, sizes, webhook URL shape.
 */
import { fail } from "../errors.js";
import { limits } from "../limits.js";
import { checkJobInteger } from "../job-settings.js";
import { type JobError, type JobWebhook, type OnParentFailure, type WebhookEventType, defaultWebhookEvents, onParentFailureModes, webhookEventTypes } from "../job.js";

/** The options a stored submit may carry (a schedule's): a submit's, without its input. */
export type StoredSubmitOptions = Pick<SubmitInput, "priority" | "timeoutSeconds" | "maxAttempts" | "webhook" | "metadata" | "tenant">;

export interface SubmitInput {
  input: unknown;
  priority?: number;
  delaySeconds?: number;
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
}

/** Tenants follow SQS MessageGroupId's alphabet (a tenant is its job message's group): letters, digits, punctuation. */
const tenantPattern = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]+$/;

export function validateSubmit(s: SubmitInput): void {
  const j = limits.jobs;
  if (s.input === undefined) fail("ValidationFailed", "input is required (any JSON value).");
  if (s.priority !== undefined) checkJobInteger("priority", s.priority, limits.priorityMin, limits.priorityMax);
  if (s.delaySeconds !== undefined) checkJobInteger("delaySeconds", s.delaySeconds, 0, j.delayMaxSeconds);
  if (s.timeoutSeconds !== undefined) checkJobInteger("timeoutSeconds", s.timeoutSeconds, 1, j.timeoutMaxSeconds);
  if (s.maxAttempts !== undefined) checkJobInteger("maxAttempts", s.maxAttempts, 1, j.maxAttemptsMax);
  if (s.metadata !== undefined) {
    if (s.metadata === null || typeof s.metadata !== "object" || Array.isArray(s.metadata)) fail("ValidationFailed", "metadata must be a JSON object.");
    const size = Buffer.byteLength(JSON.stringify(s.metadata), "utf8");
    if (size > j.metadataMaxBytes) fail("ValidationFailed", `metadata is ${size} bytes of JSON; at most ${j.metadataMaxBytes} are allowed.`);
  }
  if (s.tenant !== undefined) checkTenant(s.tenant);
  if (s.dependsOn !== undefined) checkDependsOn(s.dependsOn);
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
