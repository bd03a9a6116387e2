"""Streamed output against a real server: ctx.emit from a worker thread and from a coroutine
handler, batches of 100, ctx.flush, job.stream() in order (blocking and asyncio), a failed job's
error raised after its chunks, and a retry's new attempt replacing the old one."""
from __future__ import annotations

import asyncio
import threading
from typing import Any, List

import pytest

from sluice_client import AsyncSluice, JobFailedError, NonRetryableError, RetryableError, Sluice
from support import SluiceServer, http_json


def test_stream_gives_every_chunk_in_order_sent_at_most_1000_a_request(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)

    def handler(job, ctx):  # type: ignore[no-untyped-def]
        for i in range(job.input["n"]):
            ctx.emit(f"t{i}")
        return "done"

    job = q.submit({"n": 2500})
    with q.work(handler):
        chunks = list(job.stream())
    assert chunks == [f"t{i}" for i in range(2500)]
    sizes = [len(e["chunks"]) for e in sluice.jobs.events(job.id, since="0") if e["type"] == "job.output"]
    # The first request leaves at once; the rest gather while it is in flight, up to 1,000 a request.
    assert sum(sizes) == 2500 and max(sizes) <= 1000 and len(sizes) >= 3
    stored = http_json("GET", f"{sluice.url}/v1/jobs/{job.id}/output-chunks?from=2000")
    assert (len(stored["chunks"]), stored["chunks"][0], stored["done"]) == (500, "t2000", True)


def test_chunks_go_out_while_the_handler_runs_and_flush_waits_for_them(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    seen = threading.Event()
    stored_at_flush: List[Any] = []

    def handler(job, ctx):  # type: ignore[no-untyped-def]
        ctx.emit({"token": "Hel"})
        ctx.emit({"token": "lo"})
        assert seen.wait(20), "the follower never got the first chunks"
        ctx.emit({"token": "!"})
        ctx.flush()
        stored_at_flush.extend(http_json("GET", f"{sluice.url}/v1/jobs/{job.id}/output-chunks")["chunks"])
        return None

    job = q.submit("go")
    got: List[Any] = []
    with q.work(handler):
        for chunk in job.stream():
            got.append(chunk)
            if len(got) == 2:
                seen.set()
    assert got == [{"token": "Hel"}, {"token": "lo"}, {"token": "!"}]
    assert stored_at_flush == got


def test_a_failed_jobs_error_is_raised_after_its_chunks_even_when_joined_late(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)

    def handler(job, ctx):  # type: ignore[no-untyped-def]
        ctx.emit(1)
        ctx.emit(2)
        raise NonRetryableError("model ran out of memory")

    job = q.submit("x", max_attempts=1)
    with q.work(handler):
        job.wait(timeout=20)
    got: List[Any] = []
    with pytest.raises(JobFailedError) as caught:
        for chunk in job.stream():
            got.append(chunk)
    assert got == [1, 2]
    assert caught.value.error["message"] == "model ran out of memory"


def test_a_retrys_new_attempt_replaces_the_abandoned_one(sluice: Sluice, queue_name: str) -> None:
    http_json("PUT", f"{sluice.url}/v1/queues/{queue_name}", {"backoff": {"baseSeconds": 0, "capSeconds": 0}})
    q = sluice.queue(queue_name)
    first_seen = threading.Event()

    def handler(job, ctx):  # type: ignore[no-untyped-def]
        if job.attempt == 1:
            ctx.emit("a1")
            ctx.emit("a2")
            assert first_seen.wait(20)
            raise RetryableError("flaky GPU")
        ctx.emit("b1")
        return "ok"

    job = q.submit("x", max_attempts=2)
    attempts: List[int] = []
    got: List[Any] = []
    with q.work(handler):
        for chunk in job.stream(on_new_attempt=attempts.append):
            got.append(chunk)
            if len(got) == 2:
                first_seen.set()
    assert (got, attempts) == (["a1", "a2", "b1"], [2])


def test_emit_refuses_what_json_cannot_carry_at_once(sluice: Sluice, queue_name: str) -> None:
    q = sluice.queue(queue_name)
    raised: List[BaseException] = []

    def handler(job, ctx):  # type: ignore[no-untyped-def]
        try:
            ctx.emit(object())
        except TypeError as err:
            raised.append(err)
        return "ok"

    job = q.submit("x")
    with q.work(handler):
        assert job.wait(timeout=20).status == "succeeded"
    assert len(raised) == 1


def test_async_for_on_the_asyncio_client_and_a_coroutine_handler(server: SluiceServer, queue_name: str) -> None:
    async def scenario() -> List[Any]:
        async with AsyncSluice(server.url) as sluice:
            q = sluice.queue(queue_name)

            async def handler(job, ctx):  # type: ignore[no-untyped-def]
                for word in job.input.split():
                    ctx.emit(word)
                await ctx.aflush()
                return None

            job = await q.submit("the quick brown fox")
            async with q.work(handler):
                return [chunk async for chunk in job.stream()]

    assert asyncio.run(scenario()) == ["the", "quick", "brown", "fox"]


def test_what_gathers_behind_a_request_goes_up_to_1000_a_request(server: SluiceServer, queue_name: str) -> None:
    async def scenario() -> List[int]:
        async with AsyncSluice(server.url) as sluice:
            q = sluice.queue(queue_name)

            async def handler(job, ctx):  # type: ignore[no-untyped-def]
                # All emitted before the loop runs a send: they gather, and go in requests of 1,000.
                for i in range(2500):
                    ctx.emit(i)
                await ctx.aflush()
                return None

            job = await q.submit("go")
            async with q.work(handler):
                assert [chunk async for chunk in job.stream()] == list(range(2500))
            return [len(e["chunks"]) async for e in sluice.jobs.events(job.id, since="0") if e["type"] == "job.output"]

    assert asyncio.run(scenario()) == [1000, 1000, 500]
