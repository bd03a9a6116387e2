/**
 * One log line per finished request at debug (protocol, action, queue and its account where
 * known, status, error code, duration), and every 5xx at error — except 503, which only shutdown answers (clients retry it):
 * warn, so a routine restart doesn't page anyone. Only the named fields of a RequestOutcome:
 * never a body, a URL or a header.
 */
import type { RequestObserver } from "../protocols/http/request-outcome.js";
import type { Logger } from "./logger.js";

export function requestLog(logger: Logger, storeFull: () => boolean = () => false): RequestObserver {
  // The level is fixed for the process: decide once, not per request.
  const debug = logger.isLevelEnabled("debug");
  return (o) => {
    if (o.status < 500 && !debug) return;
    const fields = { protocol: o.protocol, action: o.action, queue: o.queue, account: o.account, status: o.status, code: o.errorCode, durationMs: Math.round(o.durationSeconds * 1e6) / 1e3 };
    if (o.status === 503 && storeFull()) logger.debug(fields, "request refused: the disk is full");
    else if (o.status === 503) logger.warn(fields, "request refused: shutting down");
    else if (o.status >= 500) logger.error(fields, "request failed");
    else logger.debug(fields, "request");
  };
}
