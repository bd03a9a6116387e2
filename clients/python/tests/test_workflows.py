"""The workflow helpers against a real server: schedules, dependencies (a handler reading its
parents' outputs), tenants, and event streams that resume by themselves after reconnects."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from sluice_client import AsyncSluice, Sluice, SluiceApiError


def test_schedules_put_get_list_pause_resume_delete(sluice: Sluice, queue_name: str) -> None:
    name = f"{queue_name}-s"[:80]
    made = sluice.schedules.put(name, queue_name, {"report": "daily"}, cron="0 9 * * 1-5", timezone="Europe/Berlin", options={"priority": 2})
    assert (made["cron"], made["timezone"], made["options"], made["paused"], made["catchUp"]) == ("0 9 * * 1-5", "Europe/Berlin", {"priority": 2}, False, "latest")
    assert len(made["nextRuns"]) == 5
    assert sluice.schedules.get(name)["input"] == {"report": "daily"}
    names = [s["name"] for s in sluice.schedules.list(limit=1000)[0]]
    assert name in names
    assert sluice.schedules.pause(name)["nextRuns"] == []
    assert sluice.schedules.resume(name)["paused"] is False
    sluice.schedules.delete(name)
    with pytest.raises(SluiceApiError) as caught:
        sluice.schedules.get(name)
    assert caught.value.code == "ScheduleNotFound"
    with pytest.raises(SluiceApiError) as bad:
        sluice.schedules.put(name, queue_name, 1, cron="* * * * * * *")
    assert bad.value.status == 400 and "5 or 6 parts" in str(bad.value)


def test_depends_on_waits_and_the_handler_sees_its_parents_outputs(sluice: Sluice, queue_name: str) -> None:
    first = sluice.queue(queue_name + "-a").submit({"text": "hello"})
    second = sluice.queue(queue_name + "-b").submit({}, depends_on=[first.id], tenant="acme")
    assert (second.status, second.depends_on, second.tenant) == ("waiting", [first.id], "acme")
    seen = []

    def summarise(job):  # type: ignore[no-untyped-def]
        seen.append(job.parents)
        return {"upper": job.parents[0]["output"]["text"].upper()}

    with sluice.queue(queue_name + "-a").work(lambda j: {"text": j.input["text"]}), sluice.queue(queue_name + "-b").work(summarise):
        done = second.wait(timeout=20)
    assert (done.status, done.output) == ("succeeded", {"upper": "HELLO"})
    assert seen == [[{"id": first.id, "queue": queue_name + "-a", "status": "succeeded", "output": {"text": "hello"}, "error": None}]]


def test_events_resume_after_every_reconnect_each_event_once(sluice: Sluice, queue_name: str) -> None:
    seen: list = []
    done = threading.Event()

    def read() -> None:
        # Silent streams are taken for dead after 0.3 s: the stream reconnects again and again.
        for event in sluice.events(queue_name, since="0", idle_timeout=0.3):
            seen.append(event)
            if len(seen) == 12:
                break
        done.set()

    # Counts the stream's (re)connections, to submit between reconnects rather than after a sleep.
    http = sluice._core.http
    opened = http.open_stream
    connects = [0]

    async def counting_open_stream(*args, **kwargs):  # type: ignore[no-untyped-def]
        connects[0] += 1
        return await opened(*args, **kwargs)

    http.open_stream = counting_open_stream  # type: ignore[method-assign]
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    ids = []
    for n in range(12):
        ids.append(sluice.queue(queue_name).submit({"n": n}).id)
        if n in (3, 7):
            before = connects[0]
            deadline = time.monotonic() + 10
            while connects[0] <= before:  # a reconnect between submits: the next events come on it
                assert time.monotonic() < deadline, f"the stream did not reconnect ({connects[0]} connects, {len(seen)} events)"
                time.sleep(0.01)
    assert done.wait(30)
    del http.open_stream  # the client's own method again
    assert connects[0] >= 3
    assert [e["job"]["id"] for e in seen] == ids
    event_ids = [int(e["id"]) for e in seen]
    assert event_ids == sorted(event_ids) and len(set(event_ids)) == 12


def test_async_job_events_end_after_the_terminal_one(server, queue_name: str) -> None:  # type: ignore[no-untyped-def]
    async def scenario() -> list:
        client = AsyncSluice(server.url)
        job = await client.queue(queue_name).submit({"n": 1})
        worker = client.queue(queue_name).work(lambda j: "ok")
        types = [e["type"] async for e in client.jobs.events(job.id)]
        await worker.close()
        return types

    assert asyncio.run(scenario()) == ["job.snapshot", "job.started", "job.succeeded"]
