"""In-process workers (the blocking client's) against a real server: outcomes, heartbeats,
cancellation, progress, batches, and close()."""
from __future__ import annotations

import threading
import time
from typing import Any, List, Optional, Tuple

import pytest

from sluice_client import (
    BatchItemError,
    JobCanceledError,
    NonRetryableError,
    RetryableError,
    Sluice,
    SluiceApiError,
    WorkerClosingError,
)
from support import http_json, queue_stats, wait_until


def fast_backoff(sluice: Sluice, queue_name: str) -> None:
    http_json("PUT", f"{sluice.url}/v1/queues/{queue_name}", {"backoff": {"baseSeconds": 0, "capSeconds": 0}})


@pytest.mark.spec("outcomes")
def test_non_retryable_error_fails_at_once_into_the_dead_letter_queue(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    job = q.submit({"bad": True}, max_attempts=5)
    calls = []

    def handler(j):  # type: ignore[no-untyped-def]
        calls.append(j.attempt)
        raise NonRetryableError("bad input")

    with q.work(handler) as worker:
        done = job.wait(timeout=20)
    assert (done.status, done.attempt, done.error) == ("failed", 1, {"message": "bad input", "type": "NonRetryableError"})
    assert calls == [1] and worker.stats.failed == 1
    dlq = http_json("GET", f"{sluice.url}/v1/queues/{queue_name}")["queue"]["stats"]["deadLetterMessages"]
    assert dlq == 1


@pytest.mark.spec("outcomes")
def test_other_errors_are_retried_and_the_last_error_is_kept(sluice: Sluice, queue_name: str) -> None:
    fast_backoff(sluice, queue_name)
    q = sluice.queue(queue_name)
    flaky = q.submit({"kind": "flaky"}, max_attempts=3)
    doomed = q.submit({"kind": "doomed"}, max_attempts=2)

    def handler(j):  # type: ignore[no-untyped-def]
        if j.input["kind"] == "flaky" and j.attempt >= 2:
            return "recovered"
        raise ValueError(f"boom {j.attempt}")

    with q.work(handler, concurrency=2):
        ok = flaky.wait(timeout=20)
        bad = doomed.wait(timeout=20)
    assert (ok.status, ok.attempt, ok.output) == ("succeeded", 2, "recovered")
    assert (bad.status, bad.attempt, bad.error) == ("failed", 2, {"message": "boom 2", "type": "ValueError"})


@pytest.mark.spec("outcomes")
def test_retryable_error_waits_its_retry_after(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    job = q.submit({}, max_attempts=2)
    seen: List[Tuple[int, float]] = []

    def handler(j):  # type: ignore[no-untyped-def]
        seen.append((j.attempt, time.monotonic()))
        if j.attempt == 1:
            raise RetryableError("rate limited", retry_after_seconds=2)
        return "later"

    with q.work(handler):
        done = job.wait(timeout=30)
    assert (done.status, done.output) == ("succeeded", "later")
    assert seen[1][1] - seen[0][1] >= 1.9
    with pytest.raises(ValueError, match="whole number"):
        RetryableError("x", retry_after_seconds=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="43200"):
        BatchItemError("x", retry_after_seconds=86_400)


@pytest.mark.spec("outcomes")
def test_outputs_the_server_would_refuse_fail_the_job_at_once(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    big = q.submit({"kind": "big"}, max_attempts=3)
    odd = q.submit({"kind": "odd"}, max_attempts=3)
    exact = q.submit({"kind": "exact"}, max_attempts=3)

    def handler(j):  # type: ignore[no-untyped-def]
        kind = j.input["kind"]
        if kind == "big":
            return "x" * (1024 * 1024)  # 1 MiB of characters is 1 MiB + 2 bytes of JSON
        if kind == "exact":
            return "é" * ((1024 * 1024 - 2) // 2)
        return {"when": object()}

    with q.work(handler):
        assert (big.wait(timeout=20).status, big.wait(timeout=20).attempt) == ("failed", 1)
        assert "1048578 bytes" in big.refresh().error["message"]
        assert odd.wait(timeout=20).error["message"].startswith("handler output is not JSON-serializable")
        assert exact.wait(timeout=20).status == "succeeded"


@pytest.mark.spec("heartbeats")
def test_a_job_running_three_times_its_lease_survives_on_heartbeats(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    job = q.submit({"model": "big"}, max_attempts=3)
    leases = []

    def handler(j, ctx):  # type: ignore[no-untyped-def]
        leases.append(j.lease_id)
        time.sleep(3.5)  # lease 1 s: alive only through heartbeats every ~333 ms
        return "finished"

    with q.work(handler, lease_seconds=1):
        done = job.wait(timeout=20)
    assert (done.status, done.attempt, done.output) == ("succeeded", 1, "finished")
    assert len(leases) == 1


@pytest.mark.spec("heartbeats")
def test_progress_reaches_the_server_with_the_next_heartbeat(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    job = q.submit({})
    release = threading.Event()

    def handler(j, ctx):  # type: ignore[no-untyped-def]
        ctx.progress(0.25)
        ctx.progress(0.5)
        release.wait(20)
        return None

    with q.work(handler, lease_seconds=1):
        wait_until(lambda: sluice.jobs.get(job.id).progress == 0.5, what="progress 0.5 on the server")
        release.set()
        assert job.wait(timeout=20).status == "succeeded"


@pytest.mark.spec("cancel")
def test_cancel_sets_ctx_cancelled_and_the_job_ends_canceled(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    job = q.submit({"long": True})
    started = threading.Event()
    reasons: List[Optional[BaseException]] = []

    def handler(j, ctx):  # type: ignore[no-untyped-def]
        started.set()
        assert ctx.cancelled.wait(20)
        reasons.append(ctx.cancel_reason)
        return "partial"  # ignored: a canceled job ends canceled

    with q.work(handler, lease_seconds=1) as worker:
        assert started.wait(20)
        assert job.cancel().status == "running"
        done = job.wait(timeout=20)
    assert done.status == "canceled"
    assert isinstance(reasons[0], JobCanceledError)
    assert worker.stats.failed == 1


@pytest.mark.spec("batch")
def test_batch_handler_gets_at_most_size_jobs_and_fails_items_one_by_one(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    jobs = [q.submit({"n": n}, max_attempts=1) for n in range(7)]
    sizes: List[int] = []

    def handler(batch, ctx):  # type: ignore[no-untyped-def]
        sizes.append(len(batch))
        ctx.progress(0.5)
        return [BatchItemError("odd", retryable=False) if j.input["n"] % 2 else {"n2": j.input["n"] ** 2} for j in batch]

    with q.work(handler, batch=(3, 0.05)) as worker:
        done = [j.wait(timeout=20) for j in jobs]
    assert max(sizes) <= 3 and sum(sizes) == 7
    for j in done:
        n = j.input["n"]
        if n % 2:
            assert (j.status, j.error) == ("failed", {"message": "odd", "type": "BatchItemError"})
        else:
            assert (j.status, j.output) == ("succeeded", {"n2": n * n})
    assert (worker.stats.completed, worker.stats.failed) == (4, 3)


@pytest.mark.spec("batch")
def test_a_batch_handler_that_raises_or_miscounts_fails_the_whole_batch(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    jobs = [q.submit({"n": n}, max_attempts=1) for n in range(2)]
    with q.work(lambda batch: [1], batch=(2, 0.5)):
        done = [j.wait(timeout=20) for j in jobs]
    assert all(j.status == "failed" and "returned 1 results for" in j.error["message"] for j in done)


@pytest.mark.spec("close")
def test_close_finishes_running_jobs_and_stops_leasing(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    first = q.submit({"n": 1})
    started = threading.Event()

    def handler(j):  # type: ignore[no-untyped-def]
        started.set()
        time.sleep(0.5)
        return j.input["n"]

    worker = q.work(handler)
    assert started.wait(20)
    worker.close()
    assert first.refresh().status == "succeeded"
    # A worker still long-polling would get this job inside the submit's own write (the answer
    # would say running); after close() nothing polls, so it stays queued.
    later = q.submit({"n": 2})
    assert later.status == "queued" and later.refresh().status == "queued"
    assert (worker.stats.leased, worker.stats.completed, worker.stats.active) == (1, 1, 0)


@pytest.mark.spec("close")
def test_close_with_a_timeout_hands_back_a_handler_that_ignores_cancel(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    job = q.submit({}, max_attempts=3)
    started = threading.Event()
    reasons: List[Any] = []

    def stubborn(j, ctx):  # type: ignore[no-untyped-def]
        started.set()
        ctx.cancelled.wait(30)
        reasons.append(ctx.cancel_reason)
        time.sleep(1)
        return "too late"

    worker = q.work(stubborn, lease_seconds=5)
    assert started.wait(20)
    t0 = time.monotonic()
    worker.close(timeout=0.3)
    assert time.monotonic() - t0 < 5
    assert isinstance(reasons[0] if reasons else wait_until(lambda: reasons)[0], WorkerClosingError)
    after = job.refresh()
    # Handed back through fail: queued again at once, the attempt counted.
    assert (after.status, after.attempt, after.error["type"]) == ("queued", 1, "WorkerClosingError")
    with q.work(lambda j: f"attempt {j.attempt}"):
        assert job.wait(timeout=20).output == "attempt 2"


@pytest.mark.spec("fatal-lease")
def test_a_lease_refusal_no_retry_fixes_stops_the_worker(sluice: Sluice) -> None:
    errors: List[Tuple[str, BaseException]] = []
    worker = sluice.queue("bad.name").work(lambda j: None, on_error=lambda err, phase, job_id: errors.append((phase, err)))
    with pytest.raises(SluiceApiError) as caught:
        worker.join(20)
    assert (caught.value.code, caught.value.status) == ("ValidationFailed", 400)
    assert [phase for phase, _ in errors] == ["lease"]


def test_worker_options_are_checked_before_anything_is_leased(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    for kwargs in ({"concurrency": 0}, {"lease_seconds": 0}, {"wait_seconds": 21}, {"batch": (101, 0.02)}, {"batch": (2, 11)}):
        with pytest.raises(ValueError):
            q.work(lambda j: None, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        q.work("not a function")  # type: ignore[arg-type]
    assert http_json("GET", f"{sluice.url}/v1/queues/{queue_name}")["error"]["code"] == "QueueNotFound"


def test_progress_must_be_a_number(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    job = q.submit({})
    errors: List[BaseException] = []

    def handler(j, ctx):  # type: ignore[no-untyped-def]
        try:
            ctx.progress("half")
        except TypeError as err:
            errors.append(err)
        return "ok"

    with q.work(handler):
        assert job.wait(timeout=20).status == "succeeded"
    assert "progress must be a number" in str(errors[0])
    assert queue_stats(sluice.url, queue_name)["succeeded"] == 1
