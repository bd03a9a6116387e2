"""The asyncio client and worker against a real server (through the fault proxy where the test
counts requests)."""
from __future__ import annotations

import asyncio
import time
from typing import List

import pytest

from sluice_client import AsyncSluice, JobWaitTimeoutError, SluiceApiError
from support import FaultProxy, SluiceServer, queue_stats


@pytest.mark.spec("lifecycle")
def test_submit_wait_run_get_cancel_list(server: SluiceServer, queue_name: str) -> None:
    async def scenario() -> None:
        async with AsyncSluice(server.url) as sluice:
            q = sluice.queue(queue_name)
            queued = await q.submit({"n": 0})
            assert (await queued.cancel()).status == "canceled"

            async def handler(job, ctx):  # type: ignore[no-untyped-def]
                await asyncio.sleep(0.01)
                ctx.progress(1)
                return job.input["n"] + 1

            async with q.work(handler, concurrency=4) as worker:
                job = await q.submit({"n": 1}, idempotency_key="a-1")
                assert (await q.submit({"n": 1}, idempotency_key="a-1")).replayed
                done = await job.wait(timeout=20)
                ran = await q.run({"n": 41}, timeout=20)
            assert (done.status, done.output, ran.output) == ("succeeded", 2, 42)
            assert worker.stats.completed == 2
            assert (await sluice.jobs.get(job.id)).status == "succeeded"
            statuses = sorted(j.status for j in await q.list())
            assert statuses == ["canceled", "succeeded", "succeeded"]
            with pytest.raises(SluiceApiError) as caught:
                await sluice.jobs.get("nope")
            assert caught.value.code == "JobNotFound"
            with pytest.raises(JobWaitTimeoutError):
                await q.run({"n": 1}, timeout=0.5)

    asyncio.run(scenario())


@pytest.mark.spec("submit-batching")
def test_submits_of_one_loop_iteration_share_one_request_and_each_gets_its_own_outcome(proxy: FaultProxy, server: SluiceServer, queue_name: str) -> None:
    async def scenario() -> List[object]:
        q = AsyncSluice(proxy.url).queue(queue_name)
        results = await asyncio.gather(*(q.submit({"n": n}) for n in range(50)), q.submit({"n": -1}, priority=42), return_exceptions=True)
        return list(results)

    results = asyncio.run(scenario())
    jobs, refused = results[:50], results[50]
    assert [j.input for j in jobs] == [{"n": n} for n in range(50)]  # type: ignore[attr-defined]
    assert isinstance(refused, SluiceApiError) and refused.code == "ValidationFailed"
    posts = [r["path"] for r in proxy.log() if r["method"] == "POST"]
    # One batch (refused as a whole for the bad entry), then each entry on its own: 51 submits in
    # all — what matters is that the good ones were one request when nothing was wrong:
    assert posts[0].endswith("/jobs/batch")
    assert queue_stats(server.url, queue_name)["queued"] == 50


@pytest.mark.spec("submit-batching")
def test_concurrent_runs_are_one_request_and_a_fast_job_is_not_held_by_a_slow_one(proxy: FaultProxy, queue_name: str) -> None:
    async def scenario() -> None:
        sluice = AsyncSluice(proxy.url)
        q = sluice.queue(queue_name)

        async def handler(job):  # type: ignore[no-untyped-def]
            await asyncio.sleep(job.input["seconds"])
            return job.input["seconds"]

        async with q.work(handler, concurrency=4):
            started = time.monotonic()
            fast_done = []

            async def timed(seconds: float) -> None:
                job = await q.run({"seconds": seconds}, timeout=20)
                fast_done.append((seconds, time.monotonic() - started, job.output))

            await asyncio.gather(timed(0), timed(2), timed(0))
        fast = [t for s, t, _ in fast_done if s == 0]
        slow = [t for s, t, _ in fast_done if s == 2]
        assert max(fast) < slow[0] - 1
        assert [o for _, _, o in fast_done] == [0, 0, 2]

    asyncio.run(scenario())
    batches = [r for r in proxy.log() if r["path"].split("?")[0].endswith("/jobs/batch")]
    assert len(batches) == 1 and "?wait=" in batches[0]["path"]


def test_a_cancelled_run_caller_leaves_the_others_alone(server: SluiceServer, queue_name: str) -> None:
    async def scenario() -> None:
        sluice = AsyncSluice(server.url)
        q = sluice.queue(queue_name)
        waiting = asyncio.ensure_future(q.run({"n": 1}, timeout=30))
        other = asyncio.ensure_future(q.run({"n": 2}, timeout=30))
        await asyncio.sleep(0.3)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        async with q.work(lambda job: job.input["n"] * 10):
            assert (await other).output == 20

    asyncio.run(scenario())
