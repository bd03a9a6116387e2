"""The worker's OpenTelemetry span around a job's handler: a child of the trace context the job
was submitted with (``job.trace``), so one trace runs from the caller's submit to the handler.
Only when ``opentelemetry-api`` is installed; the SDK depends on nothing."""
from __future__ import annotations

import contextlib
from typing import Any, ContextManager

try:  # pragma: no cover - which branch runs depends on what is installed
    from opentelemetry import trace as _otel_trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator as _Propagator
except ImportError:  # pragma: no cover
    _otel_trace = None  # type: ignore[assignment]
    _Propagator = None  # type: ignore[assignment,misc]


def job_span(job: Any) -> ContextManager[Any]:
    """A span context manager for running ``job``'s handler, or a no-op one (no OpenTelemetry, or
    a job submitted without a trace context)."""
    trace_context = getattr(job, "trace", None)
    if _otel_trace is None or _Propagator is None or not trace_context:
        return contextlib.nullcontext()
    parent = _Propagator().extract(carrier=dict(trace_context))
    attributes = {"messaging.system": "sluice", "messaging.destination.name": job.queue, "messaging.message.id": job.id, "sluice.job.attempt": job.attempt}
    tracer = _otel_trace.get_tracer("sluice_client")
    return tracer.start_as_current_span(f"{job.queue} process", context=parent, kind=_otel_trace.SpanKind.CONSUMER, attributes=attributes)
