"""A submit's W3C trace context reaches the Python worker: ``job.trace`` on the leased job, and —
when ``opentelemetry-api`` is installed — the handler's span is the submit's child. Debian ships no
``opentelemetry-api`` and the test machine reaches no package index, so the second test runs the
worker in a child process with a stand-in ``opentelemetry`` package (tests/fixtures/otel_stub)
that records the spans the SDK starts, with the parent it asked for."""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any, Dict, List

from sluice_client import Sluice

HERE = Path(__file__).resolve().parent
SDK_SRC = HERE.parent / "src"
STUB = HERE / "fixtures" / "otel_stub"


def submit_traced(url: str, queue: str, traceparent: str) -> str:
    req = urllib.request.Request(
        f"{url}/v1/queues/{queue}/jobs", data=json.dumps({"input": "hi"}).encode(), method="POST",
        headers={"content-type": "application/json", "traceparent": traceparent, "tracestate": "vendor=abc"},
    )  # fmt: skip
    with urllib.request.urlopen(req, timeout=10) as res:
        return json.loads(res.read())["job"]["id"]


def test_the_leased_job_carries_the_submits_trace_context(sluice: Sluice, queue_name: str) -> None:
    traceparent = f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"
    job_id = submit_traced(sluice.url, queue_name, traceparent)
    seen: List[Any] = []
    with sluice.queue(queue_name).work(lambda job: seen.append(job.trace) or "ok"):
        assert sluice.jobs.wait(job_id, timeout=20).status == "succeeded"
    assert seen == [{"traceparent": traceparent, "tracestate": "vendor=abc"}]


WORKER = """
import json, sys
from sluice_client import Sluice
from opentelemetry import recorded
url, queue, job_id = sys.argv[1:4]
sluice = Sluice(url)
with sluice.queue(queue).work(lambda job: "ok"):
    sluice.jobs.wait(job_id, timeout=20)
print(json.dumps(recorded))
"""


def test_with_opentelemetry_installed_the_handler_runs_in_the_submits_child_span(sluice: Sluice, queue_name: str) -> None:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    job_id = submit_traced(sluice.url, queue_name, f"00-{trace_id}-{span_id}-01")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(STUB), str(SDK_SRC)]))
    out = subprocess.run([sys.executable, "-c", WORKER, sluice.url, queue_name, job_id], env=env, capture_output=True, text=True, timeout=60, check=True).stdout
    spans: List[Dict[str, Any]] = json.loads(out.strip().splitlines()[-1])
    assert len(spans) == 1
    span = spans[0]
    assert (span["name"], span["parent"], span["kind"]) == (f"{queue_name} process", {"traceparent": f"00-{trace_id}-{span_id}-01", "tracestate": "vendor=abc"}, "CONSUMER")
    assert span["attributes"]["messaging.message.id"] == job_id
    assert span["ended"] is True
