"""Worker labels and job requirements against a real server: ``requires`` on submit, ``labels`` and
``worker_id`` on a worker (sync and asyncio), sent with every lease request."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from sluice_client import AsyncSluice, Sluice


def _run_until(sluice: Sluice, queue: str, n: int, **options: object) -> list:
    ran: list = []
    done = threading.Event()

    def handle(job):  # type: ignore[no-untyped-def]
        ran.append(job.id)
        if len(ran) == n:
            done.set()
        return {"labels": options.get("labels")}

    with sluice.queue(queue).work(handle, concurrency=2, **options):  # type: ignore[arg-type]
        assert done.wait(20), f"{n} jobs were not run"
    return ran


def test_a_labelled_worker_runs_what_it_can_and_an_unlabelled_one_only_jobs_that_require_nothing(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    gpu = q.submit({"n": 1}, requires={"gpu": "a100"})
    plain = q.submit({"n": 2})
    assert gpu.requires == {"gpu": "a100"} and plain.requires is None
    assert _run_until(sluice, queue_name, 1, worker_id="py-cpu") == [plain.id]
    assert _run_until(sluice, queue_name, 1, labels={"gpu": "a100", "region": "eu"}, worker_id="py-gpu") == [gpu.id]
    done = sluice.jobs.get(gpu.id)
    assert (done.status, done.output) == ("succeeded", {"labels": {"gpu": "a100", "region": "eu"}})
    # The server writes what its leases saw at most a second later.
    deadline = time.monotonic() + 20
    while True:
        seen = {w["workerId"]: w for w in sluice.workers()}
        if "py-cpu" in seen and "py-gpu" in seen:
            break
        assert time.monotonic() < deadline, f"workers not listed: {sorted(seen)}"
        time.sleep(0.1)
    assert (seen["py-gpu"]["queues"], seen["py-gpu"]["labels"]) == ([queue_name], {"gpu": "a100", "region": "eu"})
    assert seen["py-cpu"]["labels"] is None


def test_async_worker_with_labels(server, queue_name: str) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with AsyncSluice(server.url) as sluice:
            q = sluice.queue(queue_name)
            job = await q.submit({"n": 1}, requires={"pool": "big"})
            seen = asyncio.Event()

            async def handle(j):  # type: ignore[no-untyped-def]
                seen.set()
                return "ok"

            worker = q.work(handle, labels={"pool": "big"})
            await asyncio.wait_for(seen.wait(), 20)
            await worker.close()
            assert (await sluice.jobs.get(job.id)).status == "succeeded"

    asyncio.run(main())


def test_bad_labels_are_refused_before_anything_is_leased(sluice: Sluice, queue_name: str) -> None:
    with pytest.raises(TypeError, match="labels must map str to str"):
        sluice.queue(queue_name).work(lambda j: None, labels={"gpu": 1})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="worker_id"):
        sluice.queue(queue_name).work(lambda j: None, worker_id="")
