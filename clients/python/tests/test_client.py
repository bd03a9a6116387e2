"""The blocking client against a real server: submit, get, wait, cancel, list, run, idempotency,
coded errors, and arguments refused before anything is sent."""
from __future__ import annotations

import math
import time
from datetime import datetime, timedelta, timezone

import pytest

from sluice_client import JobWaitTimeoutError, NonRetryableError, Sluice, SluiceApiError
from support import http_json, queue_stats


@pytest.mark.spec("lifecycle")
def test_submit_get_wait_with_a_worker(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    job = q.submit({"text": "hi"}, priority=5, metadata={"user": "u1"})
    assert (job.queue, job.status, job.input, job.priority, job.metadata) == (queue_name, "queued", {"text": "hi"}, 5, {"user": "u1"})
    assert job.replayed is False
    assert sluice.jobs.get(job.id).status == "queued"
    with q.work(lambda j: {"upper": j.input["text"].upper()}):
        done = job.wait(timeout=20)
    assert (done.status, done.output, done.attempt, done.terminal) == ("succeeded", {"upper": "HI"}, 1, True)
    assert done.raw["output"] == {"upper": "HI"}


def test_wait_without_a_timeout_waits_in_whole_slices(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    job = q.submit(2)
    with q.work(lambda j: j.input * 2):
        assert (job.wait().status, sluice.jobs.wait(job.id).output) == ("succeeded", 4)


@pytest.mark.spec("wait-timeout")
def test_wait_gives_up_after_its_timeout_with_the_last_state(sluice: Sluice, queue_name: str) -> None:
    job = sluice.queue(queue_name).submit({"x": 1})
    started = time.monotonic()
    with pytest.raises(JobWaitTimeoutError) as caught:
        job.wait(timeout=0.3)
    assert time.monotonic() - started < 5
    assert caught.value.job.id == job.id and caught.value.job.status == "queued"
    assert isinstance(caught.value, TimeoutError)


def test_cancel_a_queued_job_at_once_and_a_finished_one_is_a_coded_error(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    job = q.submit({"x": 1})
    assert job.cancel().status == "canceled"
    assert sluice.jobs.get(job.id).status == "canceled"
    other = q.submit({"x": 2})
    with q.work(lambda j: "ok"):
        other.wait(timeout=20)
    with pytest.raises(SluiceApiError) as caught:
        other.cancel()
    assert (caught.value.code, caught.value.status) == ("JobAlreadyFinished", 409)


def test_an_unknown_job_is_job_not_found(sluice: Sluice) -> None:
    for job_id in ("no-such-job", ".", ".."):
        with pytest.raises(SluiceApiError) as caught:
            sluice.jobs.get(job_id)
        assert (caught.value.code, caught.value.status) == ("JobNotFound", 404), job_id


@pytest.mark.spec("idempotency-key")
def test_idempotent_submit_replays_the_same_job_and_a_reused_key_is_refused(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    a = q.submit({"prompt": "p"}, idempotency_key="key-1")
    b = q.submit({"prompt": "p"}, idempotency_key="key-1")
    assert b.id == a.id and b.replayed and not a.replayed
    with pytest.raises(SluiceApiError) as caught:
        q.submit({"prompt": "other"}, idempotency_key="key-1")
    assert (caught.value.code, caught.value.status) == ("IdempotencyKeyReused", 422)
    # Without a key of the caller's, each submit is a job of its own (the SDK's key is per call).
    c = q.submit({"prompt": "p"})
    d = q.submit({"prompt": "p"})
    assert c.id != d.id
    assert c.idempotency_key and c.idempotency_key.startswith("sdk-")


def test_list_a_queues_jobs_by_status_newest_first(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    ids = [q.submit({"n": n}).id for n in range(3)]
    page = q.list(status="queued", limit=2)
    assert [j.id for j in page] == [ids[2], ids[1]] and page.next_cursor
    rest = q.list(status="queued", limit=2, cursor=page.next_cursor)
    assert [j.id for j in rest] == [ids[0]] and rest.next_cursor is None
    assert len(sluice.jobs.list(queue_name, status="succeeded")) == 0


@pytest.mark.spec("run")
def test_run_returns_the_finished_job_succeeded_or_failed(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)

    def handler(job):  # type: ignore[no-untyped-def]
        if job.input.get("bad"):
            raise NonRetryableError("bad input")
        return job.input["n"] * 2

    with q.work(handler, concurrency=2):
        ok = q.run({"n": 21}, timeout=20)
        bad = q.run({"bad": True}, timeout=20, max_attempts=3)
    assert (ok.status, ok.output) == ("succeeded", 42)
    assert (bad.status, bad.attempt, bad.error) == ("failed", 1, {"message": "bad input", "type": "NonRetryableError"})


def test_run_gives_up_after_its_timeout_and_the_job_stays_queued(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    with pytest.raises(JobWaitTimeoutError) as caught:
        q.run({"n": 1}, timeout=1.2)
    assert caught.value.job.status == "queued"
    assert queue_stats(sluice.url, queue_name)["queued"] == 1


def test_run_with_an_idempotency_key_twice_is_one_job(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    with q.work(lambda j: "once"):
        first = q.run({"p": 1}, idempotency_key="run-1", timeout=20)
        second = q.run({"p": 1}, idempotency_key="run-1", timeout=20)
    assert second.id == first.id and second.output == "once"
    assert queue_stats(sluice.url, queue_name)["succeeded"] == 1


def test_a_bad_option_is_the_servers_validation_error_and_creates_nothing(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    q.submit({"ok": True})
    with pytest.raises(SluiceApiError) as caught:
        q.submit({"n": 1}, priority=42)
    assert (caught.value.code, caught.value.status) == ("ValidationFailed", 400)
    assert "priority" in caught.value.message
    assert queue_stats(sluice.url, queue_name)["queued"] == 1


def test_run_at_takes_an_aware_datetime_or_text_and_refuses_a_naive_one(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    at = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=30)
    job = q.submit({"n": 1}, run_at=at)
    assert datetime.fromisoformat(job.raw["availableAt"].replace("Z", "+00:00")) == at
    job = q.submit({"n": 2}, run_at="2026-01-01T00:00:00+02:00")
    assert job.status == "queued"
    with pytest.raises(ValueError, match="timezone-aware"):
        q.submit({"n": 3}, run_at=datetime(2030, 1, 1))
    assert queue_stats(sluice.url, queue_name)["queued"] == 2


def test_arguments_refused_before_any_request(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    with pytest.raises(TypeError, match="not JSON-serializable"):
        q.submit({"x": object()})
    with pytest.raises(TypeError, match="not JSON-serializable"):
        q.submit({"x": math.nan})
    with pytest.raises(ValueError, match="timeout"):
        q.run({"n": 1}, timeout=math.nan)
    with pytest.raises(TypeError, match="timeout"):
        q.run({"n": 1}, timeout="30")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unknown option"):
        q.run({"n": 1}, timeout_ms=5)
    with pytest.raises(TypeError, match="queue name"):
        sluice.queue(7).submit({})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="http"):
        Sluice("localhost:9324")
    # Nothing of the above reached the server.
    assert http_json("GET", f"{sluice.url}/v1/queues/{queue_name}")["error"]["code"] == "QueueNotFound"


def test_a_dot_queue_name_is_refused_by_the_server_not_sent_elsewhere(sluice: Sluice) -> None:
    for name in (".", ".."):
        with pytest.raises(SluiceApiError) as caught:
            sluice.queue(name).submit({"x": 1})
        assert (caught.value.code, caught.value.status) == ("ValidationFailed", 400), name


def test_a_client_made_before_a_fork_works_in_the_child(sluice: Sluice, queue_name: str) -> None:
    """A pre-forking web server makes its client in the master, then forks its workers."""
    import os

    q = sluice.queue(queue_name)
    parent_job = q.submit({"who": "parent"})  # the parent's loop thread is running now
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            child_job = q.submit({"who": "child"})
            code = 0 if sluice.jobs.get(child_job.id).input == {"who": "child"} else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise AssertionError("the child's call never returned")
    assert os.waitstatus_to_exitcode(status) == 0
    assert q.submit({"who": "parent again"}).id != parent_job.id
    assert queue_stats(sluice.url, queue_name)["queued"] == 3
