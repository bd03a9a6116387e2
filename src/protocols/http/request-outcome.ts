/**
 * What a finished request reports to the server's logs and metrics: which API, which action, how
 * it ended and how long it took — never its body, URL or headers. Protocols fill one in; the
 * composition root decides what to do with it.
 */
import type { IncomingMessage } from "node:http";

export type ApiProtocol = "sqs_json" | "sqs_query" | "jobs" | "http";

export interface RequestOutcome {
  protocol: ApiProtocol;
  /** The SQS action, the jobs API operation, or `METHOD /route/:pattern`: a bounded set, never a raw URL. */
  action: string;
  /** The queue the request named, when it named a well-formed one. */
  queue?: string;
  /** The account (12-digit id) the request worked on, once known: its queue's owner, or the account a jobs route acted as. */
  account?: string;
  status: number;
  /** The error code answered (SQS error shape, or the jobs API's code); absent on success. */
  errorCode?: string;
  durationSeconds: number;
  /** The request's W3C trace context headers — only while the server exports traces. */
  trace?: RequestTrace;
}

export interface RequestTrace {
  traceparent: string;
  tracestate?: string;
}

/** A request's traceparent / tracestate headers, when it sent a traceparent. */
export function requestTraceOf(headers: IncomingMessage["headers"]): RequestTrace | undefined {
  const traceparent = headers.traceparent;
  if (typeof traceparent !== "string") return undefined;
  const tracestate = headers.tracestate;
  return typeof tracestate === "string" ? { traceparent, tracestate } : { traceparent };
}

export type RequestObserver = (outcome: RequestOutcome) => void;

/** What a protocol knows of a request fastify routed to it, for the app's response hook to report. */
export type RequestDetails = Pick<RequestOutcome, "protocol" | "action" | "queue" | "account" | "errorCode">;

const detailsByRequest = new WeakMap<IncomingMessage, RequestDetails>();

export function setRequestDetails(req: IncomingMessage, details: RequestDetails): void {
  detailsByRequest.set(req, details);
}

export function requestDetails(req: IncomingMessage): RequestDetails | undefined {
  return detailsByRequest.get(req);
}

const queueNamePattern = /^[A-Za-z0-9_-]{1,80}(\.fifo)?$/;

/** The name as it may appear in a log line: only a well-formed queue name (anything else is caller junk). */
export function loggableQueueName(name: string | undefined): string | undefined {
  return name !== undefined && queueNamePattern.test(name) ? name : undefined;
}
