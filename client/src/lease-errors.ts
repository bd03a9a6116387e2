/**
 * Which errors of a lease request the worker must not simply retry.
 */
import { SluiceApiError } from "./errors.js";

/**
 * A refusal no retry can fix: the server understood the lease request and rejects it (a queue
 * name it refuses, a wrong token, a URL that isn't a Sluice server). 408 and 429 ask for a retry;
 * QueueDeletedRecently ends by itself within a minute.
 */
export function isFatalLeaseError(err: unknown): err is SluiceApiError {
  return err instanceof SluiceApiError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429 && err.code !== "QueueDeletedRecently";
}

/**
 * The 400 a server from before acks answers a lease request carrying them: `complete` / `fail`
 * named as fields it doesn't know. Only this switches acks off for the worker's life; any other
 * 400 (one malformed entry) leaves them on.
 */
export function isAcksUnknownError(err: unknown): boolean {
  return err instanceof SluiceApiError && err.status === 400 && /\bbody\.(complete|fail) is not a field\b|unknown field "(complete|fail)"/.test(err.message);
}

/** The 400 a server from before the workers list answers a lease request naming its worker. */
export function isWorkerIdUnknownError(err: unknown): boolean {
  return err instanceof SluiceApiError && err.status === 400 && /\bbody\.workerId is not a field\b|unknown field "workerId"/.test(err.message);
}
