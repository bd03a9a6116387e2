/**
 * The jobs API's error answers: `{"error":{"code","message"}}`, one table from core's codes to
 * HTTP statuses, and the translation of fastify's own request errors (schema, JSON, size).
 */
import type { FastifyError } from "fastify";
import { type ErrorCode, SluiceError } from "../../core/index.js";

const statusOfCode: Partial<Record<ErrorCode, number>> = {
  Unauthenticated: 401,
  AccessDenied: 403,
  RouteNotFound: 404,
  QueueNotFound: 404,
  JobNotFound: 404,
  ScheduleNotFound: 404,
  ResourceNotFound: 404,
  LeaseMismatch: 409,
  BlobNotUploaded: 409,
  LeaseExpired: 409,
  JobAlreadyFinished: 409,
  JobNotRetryable: 409,
  RedriveInProgress: 409,
  RedriveAlreadyFinished: 409,
  QueueAlreadyExists: 409,
  QueueDeletedRecently: 409,
  PurgeQueueInProgress: 409,
  MessageTooLong: 413,
  BatchRequestTooLong: 413,
  IdempotencyKeyReused: 422,
  OverLimit: 429,
  RateLimited: 429,
  UnsupportedOperation: 501,
  InternalError: 500,
  ServiceUnavailable: 503,
  StorageFull: 503,
};

export function httpStatusOf(code: ErrorCode): number {
  return statusOfCode[code] ?? 400;
}

export interface ErrorAnswer {
  status: number;
  body: { error: { code: string; message: string } };
}

const answer = (status: number, code: string, message: string): ErrorAnswer => ({ status, body: { error: { code, message } } });

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Maps any error thrown while serving a jobs route; `unexpected` is told about the ones that are bugs. */
export function errorAnswerOf(err: unknown, unexpected: (err: unknown) => void): ErrorAnswer {
  if (err instanceof SluiceError) return answer(httpStatusOf(err.code), err.code, err.message);
  const e = err as Partial<FastifyError> & { validation?: AjvError[]; validationContext?: string };
  if (e.validation) return answer(400, "ValidationFailed", validationMessage(e.validation, e.validationContext ?? "request", e.message));
  if (e.code === "FST_ERR_CTP_BODY_TOO_LARGE") return answer(413, "MessageTooLong", "The request body is too large.");
  if (e.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") return answer(415, "ValidationFailed", "The request body must be JSON (Content-Type: application/json).");
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return answer(e.statusCode, "ValidationFailed", e.message ?? "The request is malformed.");
  }
  unexpected(err);
  return answer(500, "InternalError", "An internal error occurred.");
}

function validationMessage(errors: AjvError[], context: string, fallback?: string): string {
  const first = errors[0];
  if (!first) return fallback ?? "The request does not match the API's schema.";
  const where = `${context}${first.instancePath.replaceAll("/", ".")}`;
  if (first.keyword === "additionalProperties") return `${where} has an unknown field "${String(first.params.additionalProperty)}".`;
  if (first.keyword === "required") return `${where} is missing the required field "${String(first.params.missingProperty)}".`;
  return `${where} ${first.message ?? "is invalid"}.`;
}
