/**
 * One webhook POST. node:http rather than fetch because the socket's DNS lookup can be replaced:
 * that is where the SSRF policy is enforced at connect time. Redirects are not followed (a 3xx
 * is a failed attempt), and every attempt has a hard time limit.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { type WebhookUrlPolicy, guardedLookup, literalHostRefused } from "./url-policy.js";

export interface SendOutcome {
  delivered: boolean;
  statusCode?: number;
  error?: string;
  /** A 429 or 503 with `Retry-After`: the receiver asked for no retry before this long. */
  retryAfterMs?: number;
  /** 410 Gone: the receiver says the endpoint is gone for good; not retried. */
  final?: boolean;
}

const userAgent = "Sluice-Webhooks/1";
const errorTextMaxLength = 500;
const abortedError = "aborted: the server is shutting down";

export function postWebhook(p: { url: string; body: string; headers: Record<string, string>; timeoutMs: number; policy: WebhookUrlPolicy; signal?: AbortSignal }): Promise<SendOutcome> {
  let url: URL;
  try {
    url = new URL(p.url);
  } catch {
    return Promise.resolve({ delivered: false, error: "invalid URL" });
  }
  if (literalHostRefused(url, p.policy)) return Promise.resolve({ delivered: false, error: `refused: ${url.hostname} is a non-public address` });
  // An already-aborted signal never fires `abort`, so it is checked here instead.
  if (p.signal?.aborted) return Promise.resolve({ delivered: false, error: abortedError });
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: SendOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // The signal lives as long as the server: a listener left on it would keep this request
      // (and its socket) reachable after the attempt, one more with every delivery.
      p.signal?.removeEventListener("abort", onAbort);
      resolve(outcome);
    };
    const onAbort = (): void => {
      req.destroy(new Error(abortedError));
    };
    const req = send(
      url,
      {
        method: "POST",
        agent: false,
        lookup: guardedLookup(p.policy),
        headers: { ...p.headers, "content-type": "application/json", "content-length": Buffer.byteLength(p.body), "user-agent": userAgent },
      },
      (res) => {
        // The answer's body is not needed; drain it so the socket closes cleanly.
        res.resume();
        res.on("end", () => settle(outcomeOf(res.statusCode ?? 0, res.headers["retry-after"])));
        res.on("error", (err) => settle({ delivered: false, statusCode: res.statusCode, error: err.message.slice(0, errorTextMaxLength) }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`timed out after ${p.timeoutMs} ms`));
    }, p.timeoutMs);
    req.on("error", (err) => settle({ delivered: false, error: err.message.slice(0, errorTextMaxLength) }));
    p.signal?.addEventListener("abort", onAbort, { once: true });
    req.end(p.body);
  });
}

/**
 * What an answer means for the delivery (the Standard Webhooks guidance): 2xx delivered; 410 Gone
 * final; 429 and 503 honour a `Retry-After` (delta-seconds or an HTTP date); anything else is
 * retried on the backoff schedule.
 */
export function outcomeOf(statusCode: number, retryAfter: string | undefined, nowMs = Date.now()): SendOutcome {
  if (statusCode >= 200 && statusCode < 300) return { delivered: true, statusCode };
  if (statusCode === 410) return { delivered: false, statusCode, error: "HTTP 410 Gone: the receiver says this endpoint is gone; not retried", final: true };
  const outcome: SendOutcome = { delivered: false, statusCode, error: `HTTP ${statusCode}` };
  if ((statusCode === 429 || statusCode === 503) && retryAfter !== undefined) {
    const retryAfterMs = /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter.trim()) * 1000 : Date.parse(retryAfter) - nowMs;
    if (Number.isFinite(retryAfterMs) && retryAfterMs > 0) outcome.retryAfterMs = retryAfterMs;
  }
  return outcome;
}
