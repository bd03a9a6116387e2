/**
 * The worker's OpenTelemetry span around a job's handler: a child of the trace context the job
 * was submitted with (`job.trace`), so one trace runs from the caller's submit to the handler.
 * The SDK depends on no package: pass the `@opentelemetry/api` module in (`WorkerOptions.opentelemetry`);
 * without it, or for a job submitted without a trace context, the handler runs as it is.
 */
import type { JobTrace } from "./wire.js";

/** What the worker uses of `@opentelemetry/api` (pass the module itself: `import * as otel from "@opentelemetry/api"`). */
export interface OpenTelemetryApi {
  context: { active(): unknown };
  trace: {
    getTracer(name: string, version?: string): OtelTracer;
    setSpanContext(context: never, spanContext: { traceId: string; spanId: string; traceFlags: number; isRemote?: boolean }): unknown;
  };
}

export interface OtelTracer {
  startActiveSpan<F extends (span: OtelSpan) => unknown>(name: string, options: { kind?: number; attributes?: Record<string, string | number> }, context: never, fn: F): ReturnType<F>;
}

export interface OtelSpan {
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  end(): void;
}

/** SpanKind.CONSUMER and SpanStatusCode.ERROR: the API's stable numbers. */
const consumerKind = 4;
const errorStatus = 2;
const traceparentPattern = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})/;

/** Runs `fn` in a span that is the job's submit's child (or just runs it, untraced). */
export async function inJobSpan<T>(api: OpenTelemetryApi | undefined, job: { id: string; queue: string; attempt: number; trace?: JobTrace }, fn: () => Promise<T>): Promise<T> {
  const parent = api && job.trace ? traceparentPattern.exec(job.trace.traceparent) : null;
  if (!api || !parent) return fn();
  const context = api.trace.setSpanContext(api.context.active() as never, { traceId: parent[1]!, spanId: parent[2]!, traceFlags: parseInt(parent[3]!, 16), isRemote: true });
  const attributes = { "messaging.system": "sluice", "messaging.destination.name": job.queue, "messaging.message.id": job.id, "sluice.job.attempt": job.attempt };
  return api.trace.getTracer("@sluice/client").startActiveSpan(`${job.queue} process`, { kind: consumerKind, attributes }, context as never, async (span: OtelSpan) => {
    try {
      return await fn();
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: errorStatus, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}
