"""Transient failures, through the shared fault proxy (the one the TypeScript SDK's tests use) and
real server restarts: Retry-After honoured, backoff between resends, idempotency keys on resends
so no job is created twice, workers and heartbeats riding out an outage."""
from __future__ import annotations

import threading
import time
from typing import List

import pytest

from sluice_client import Sluice, SluiceApiError, SluiceNetworkError
from support import FaultProxy, SluiceServer, queue_stats, wait_until

SUBMIT = r"^/v1/queues/[^/]+/jobs(\?.*)?$"


@pytest.mark.spec("retry-after")
def test_a_503_with_retry_after_is_retried_no_sooner_than_asked(proxy: FaultProxy, sluice: Sluice, queue_name: str) -> None:
    job = sluice.queue(queue_name).submit({"x": 1})
    proxy.add_fault(r"^/v1/jobs/", "status", method="GET", status=503, retry_after="1")
    assert Sluice(proxy.url).jobs.get(job.id).id == job.id
    gets = [r for r in proxy.log() if r["method"] == "GET"]
    assert [r.get("fault") for r in gets] == ["status", None]
    assert gets[1]["at"] - gets[0]["at"] >= 950


@pytest.mark.spec("retry-after")
def test_a_429_is_retried_and_a_400_is_not(proxy: FaultProxy, sluice: Sluice, queue_name: str) -> None:
    job = sluice.queue(queue_name).submit({"x": 1})
    client = Sluice(proxy.url)
    proxy.add_fault(r"^/v1/jobs/", "status", method="GET", status=429, retry_after="0")
    assert client.jobs.get(job.id).id == job.id
    proxy.add_fault(r"^/v1/jobs/", "status", method="GET", status=400)
    with pytest.raises(SluiceApiError) as caught:
        client.jobs.get(job.id)
    assert caught.value.status == 400
    assert len([r for r in proxy.log() if r["method"] == "GET"]) == 3


@pytest.mark.spec("backoff")
def test_network_failures_are_retried_up_to_attempts_then_raised(proxy: FaultProxy, sluice: Sluice, queue_name: str) -> None:
    job = sluice.queue(queue_name).submit({"x": 1})
    proxy.add_fault(r"^/v1/jobs/", "reset", method="GET", times=2)
    assert Sluice(proxy.url, backoff=(0.05, 1)).jobs.get(job.id).id == job.id
    proxy.add_fault(r"^/v1/jobs/", "reset", method="GET", times=3)
    with pytest.raises(SluiceNetworkError):
        Sluice(proxy.url, attempts=3, backoff=(0.05, 1)).jobs.get(job.id)
    assert len([r for r in proxy.log() if r["method"] == "GET"]) == 6
    unreachable = Sluice("http://127.0.0.1:9", attempts=2, backoff=(0.01, 0.01))
    with pytest.raises(SluiceNetworkError):
        unreachable.jobs.get(job.id)


@pytest.mark.spec("idempotency-key")
def test_a_lost_submit_answer_is_resent_with_its_key_and_gives_the_same_job(proxy: FaultProxy, server: SluiceServer, queue_name: str) -> None:
    proxy.add_fault(SUBMIT, "drop-answer", method="POST")
    job = Sluice(proxy.url, backoff=(0.05, 0.5)).queue(queue_name).submit({"prompt": "p"})
    submits = [r for r in proxy.log() if r["method"] == "POST"]
    assert [r.get("fault") for r in submits] == ["drop-answer", None]
    assert submits[0]["idempotencyKey"] == submits[1]["idempotencyKey"] == job.idempotency_key
    assert job.replayed
    assert queue_stats(server.url, queue_name)["queued"] == 1


@pytest.mark.spec("idempotency-key")
def test_a_lost_batch_answer_resends_every_entry_with_its_key(proxy: FaultProxy, server: SluiceServer, queue_name: str) -> None:
    import asyncio

    from sluice_client import AsyncSluice

    proxy.add_fault(r"^/v1/queues/[^/]+/jobs/batch", "drop-answer", method="POST")

    async def submit_together() -> List[str]:
        q = AsyncSluice(proxy.url, backoff=(0.05, 0.5)).queue(queue_name)
        jobs = await asyncio.gather(*(q.submit({"n": n}) for n in range(5)))
        return [j.id for j in jobs]

    ids = asyncio.run(submit_together())
    assert len(set(ids)) == 5
    batches = [r for r in proxy.log() if r["path"].endswith("/jobs/batch")]
    assert [r.get("fault") for r in batches] == ["drop-answer", None]
    assert queue_stats(server.url, queue_name)["queued"] == 5


@pytest.mark.spec("idempotency-key")
def test_an_idempotent_resend_across_a_server_kill_and_restart_gives_the_same_job(own_server: SluiceServer, proxy_to, queue_name: str) -> None:  # type: ignore[no-untyped-def]
    proxy = proxy_to(own_server.url)
    # The first submit is applied (on disk: the server answered) and its answer lost; every resend
    # is cut off until the server has been killed with SIGKILL and started again on the same data.
    proxy.add_fault(SUBMIT, "drop-answer", method="POST")
    proxy.add_fault(SUBMIT, "reset", method="POST", times=10_000)

    def restart_after_the_drop() -> None:
        wait_until(lambda: any(r.get("fault") == "drop-answer" and r.get("upstreamStatus") == 201 for r in proxy.log()), what="the dropped answer")
        own_server.kill()
        own_server.start()
        proxy.clear_faults()

    restarter = threading.Thread(target=restart_after_the_drop)
    restarter.start()
    job = Sluice(proxy.url, attempts=1_000, backoff=(0.05, 0.2)).queue(queue_name).submit({"prompt": "survives"})
    restarter.join()
    submits = [r for r in proxy.log() if r["method"] == "POST"]
    assert len(submits) >= 3 and submits[-1].get("fault") is None
    assert {r["idempotencyKey"] for r in submits} == {job.idempotency_key}
    assert job.replayed and job.input == {"prompt": "survives"}
    assert queue_stats(own_server.url, queue_name)["queued"] == 1


@pytest.mark.spec("worker-outage")
def test_a_worker_rides_out_a_server_restart(own_server: SluiceServer, queue_name: str) -> None:
    sluice = Sluice(own_server.url)
    q = sluice.queue(queue_name)
    with q.work(lambda j: {"echo": j.input}, on_error=lambda *_: None):
        assert q.submit({"before": True}).wait(timeout=20).status == "succeeded"
        own_server.restart()
        after = q.submit({"after": True})
        assert after.wait(timeout=30).output == {"echo": {"after": True}}


@pytest.mark.spec("heartbeats")
def test_heartbeats_ride_out_transient_failures(proxy: FaultProxy, queue_name: str) -> None:
    sluice = Sluice(proxy.url)
    q = sluice.queue(queue_name)
    job = q.submit({})
    proxy.add_fault(r"/heartbeat$", "status", status=503, retry_after="0", times=2)

    def slow(j):  # type: ignore[no-untyped-def]
        time.sleep(3)
        return "done"

    with q.work(slow, lease_seconds=2, on_error=lambda *_: None):
        done = job.wait(timeout=20)
    assert (done.status, done.attempt) == ("succeeded", 1)
    beats = [r for r in proxy.log() if r["path"].endswith("/heartbeat")]
    assert [r.get("fault") for r in beats[:2]] == ["status", "status"] and len(beats) >= 3


@pytest.mark.spec("acks")
def test_a_lost_ack_answer_is_reported_again_through_the_jobs_route(proxy: FaultProxy, queue_name: str) -> None:
    sluice = Sluice(proxy.url)
    q = sluice.queue(queue_name)
    job = q.submit({"n": 1})
    errors: List[BaseException] = []
    # An ack-carrying lease request: the server applies the completion, its answer is lost.
    proxy.add_fault(r"/leases$", "drop-answer", method="POST", body=r'"complete":\[\{')
    with q.work(lambda j: "done", on_error=lambda err, phase, job_id: errors.append(err)):
        done = job.wait(timeout=20)
        wait_until(lambda: any(r["path"].endswith("/complete") for r in proxy.log()), what="the complete route")
    assert (done.status, done.output, done.attempt) == ("succeeded", "done", 1)
    # The complete route found the job finished already (the lost request had completed it).
    assert [getattr(e, "code", None) for e in errors] == ["JobAlreadyFinished"]
