/**
 * OpenTelemetry traces of the server's requests, exported over OTLP/HTTP (JSON) when an endpoint
 * is configured (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` +
 * `/v1/traces`). One span per answered request — an SQS action, a jobs API route — made from what
 * the request reported when it finished, a child of the `traceparent` it came with. Without an
 * endpoint nothing here is loaded: the SDK packages are imported only when tracing is on.
 */
import type { RequestOutcome } from "../protocols/http/request-outcome.js";
import { parseTraceparent } from "../core/index.js";

export interface RequestTracer {
  /** One finished request: a span from its start to now. */
  record(outcome: RequestOutcome): void;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

export interface TracingConfig {
  /** Where spans go (an OTLP/HTTP traces URL); undefined: no tracing. */
  endpoint: string | undefined;
  serviceName: string;
  version: string;
}

/** The traces endpoint the standard OTEL_* variables name, if any. */
export function otlpTracesEndpointOf(env: NodeJS.ProcessEnv): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

// The few shapes of the OpenTelemetry SDK used here, so that nothing imports its packages by name
// (they load only when tracing is on).
interface OtelSpan {
  setStatus(status: { code: number; message?: string }): void;
  end(endTime?: number): void;
}
interface OtelTracer {
  startSpan(name: string, options: { kind: number; startTime: number; attributes: Record<string, string | number> }, context?: unknown): OtelSpan;
}
interface OtelProvider {
  getTracer(name: string, version?: string): OtelTracer;
  shutdown(): Promise<void>;
}
interface OtelApi {
  ROOT_CONTEXT: unknown;
  trace: { setSpanContext(context: unknown, spanContext: { traceId: string; spanId: string; traceFlags: number; isRemote: boolean; traceState?: unknown }): unknown };
  createTraceState?(raw: string): unknown;
}

/** SpanKind.SERVER, SpanStatusCode.ERROR (stable numbers of the OpenTelemetry API). */
const serverKind = 1;
const errorStatus = 2;

const load = (name: string): Promise<Record<string, unknown>> => import(name) as Promise<Record<string, unknown>>;

export async function startRequestTracer(config: TracingConfig): Promise<RequestTracer | undefined> {
  if (config.endpoint === undefined) return undefined;
  const [api, base, exporterModule, resources] = await Promise.all([
    load("@opentelemetry/api"),
    load("@opentelemetry/sdk-trace-base"),
    load("@opentelemetry/exporter-trace-otlp-http"),
    load("@opentelemetry/resources"),
  ]);
  const otel = api as unknown as OtelApi;
  type Ctor<T> = new (...args: unknown[]) => T;
  const Exporter = exporterModule.OTLPTraceExporter as Ctor<unknown>;
  const Batch = base.BatchSpanProcessor as Ctor<unknown>;
  const Provider = base.BasicTracerProvider as Ctor<OtelProvider>;
  const resourceFromAttributes = resources.resourceFromAttributes as (attrs: Record<string, string>) => unknown;
  const provider = new Provider({
    resource: resourceFromAttributes({ "service.name": config.serviceName, "service.version": config.version }),
    spanProcessors: [new Batch(new Exporter({ url: config.endpoint }))],
  });
  const tracer = provider.getTracer("sluice", config.version);
  return {
    record(outcome) {
      const endMs = Date.now();
      const parent = outcome.trace && parseTraceparent(outcome.trace.traceparent);
      const context = parent
        ? otel.trace.setSpanContext(otel.ROOT_CONTEXT, {
            traceId: parent.traceId,
            spanId: parent.spanId,
            traceFlags: parent.flags,
            isRemote: true,
            ...(outcome.trace?.tracestate && otel.createTraceState ? { traceState: otel.createTraceState(outcome.trace.tracestate) } : {}),
          })
        : undefined;
      const attributes: Record<string, string | number> = { "rpc.system": outcome.protocol.startsWith("sqs") ? "aws-api" : "http", "sluice.protocol": outcome.protocol, "http.response.status_code": outcome.status };
      if (outcome.queue !== undefined) attributes["sluice.queue"] = outcome.queue;
      if (outcome.account !== undefined) attributes["sluice.account"] = outcome.account;
      if (outcome.errorCode !== undefined) attributes["error.type"] = outcome.errorCode;
      const name = outcome.protocol.startsWith("sqs") ? `SQS ${outcome.action}` : outcome.action;
      const span = tracer.startSpan(name, { kind: serverKind, startTime: endMs - outcome.durationSeconds * 1000, attributes }, context);
      if (outcome.status >= 500) span.setStatus({ code: errorStatus, message: outcome.errorCode });
      span.end(endMs);
    },
    shutdown: () => provider.shutdown(),
  };
}
